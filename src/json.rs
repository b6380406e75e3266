//! JS values to and from JSON (`serde_json::Value`), safely.
//!
//! napi's own conversion recurses without limit, so a cyclic or very deep object
//! overflows the native stack. This one stops at [`MAX_ARGUMENT_DEPTH`] levels, names a
//! cycle as a cycle, and refuses what JSON cannot carry (functions, symbols, BigInt,
//! NaN and infinities) with the path where it found it. Like `JSON.stringify`, it skips
//! `undefined` properties and honours `toJSON` (so a `Date` becomes its ISO string).

use std::ffi::CStr;
use std::ptr;

use napi::sys;
use serde_json::{Map, Number, Value};
use toolhost::{MAX_ARGUMENT_BYTES, MAX_ARGUMENT_DEPTH};

use crate::js::{self, RawEnv, RawValue};

/// Why a JS value is not JSON, with a JSON Pointer to where.
#[derive(Debug)]
pub struct NotJson {
    pub path: String,
    pub reason: String,
}

impl std::fmt::Display for NotJson {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let at = if self.path.is_empty() { "the root" } else { &self.path };
        write!(f, "{} at {at}", self.reason)
    }
}

struct Walker {
    env: RawEnv,
    ancestors: Vec<RawValue>,
    path: Vec<String>,
    /// Roughly the size of the value as JSON text so far, held to `MAX_ARGUMENT_BYTES`
    /// like argument text is.
    bytes: usize,
}

pub fn to_json(env: RawEnv, v: RawValue) -> Result<Value, NotJson> {
    let mut w = Walker { env, ancestors: Vec::new(), path: Vec::new(), bytes: 0 };
    w.walk(v)?.ok_or_else(|| NotJson { path: String::new(), reason: "undefined is not JSON".into() })
}

impl Walker {
    fn fail(&self, reason: impl Into<String>) -> NotJson {
        let path = self.path.iter().map(|p| format!("/{}", p.replace('~', "~0").replace('/', "~1"))).collect();
        NotJson { path, reason: reason.into() }
    }

    /// Through `runtime.js`'s `keys`: the object's `toJSON` method if it has one and
    /// `ignore_to_json` is false, else `Object.keys(v)`.
    fn keys(&self, v: RawValue, ignore_to_json: bool) -> Result<RawValue, NotJson> {
        let env = self.env;
        let listed = crate::runtime::runtime(env)
            .ok()
            .and_then(|rt| rt.call(env, &rt.keys, &[v, js::boolean(env, ignore_to_json)]).ok());
        listed.ok_or_else(|| {
            js::clear_exception(env);
            self.fail("its properties could not be read")
        })
    }

    /// `None` for `undefined` (skipped in objects, `null` in arrays, as JSON does).
    fn walk(&mut self, v: RawValue) -> Result<Option<Value>, NotJson> {
        let env = self.env;
        // Every value costs at least a separator and a short token when written as JSON.
        self.bytes += 2;
        if self.bytes > MAX_ARGUMENT_BYTES {
            return Err(self.fail(format!("the value is larger than the {MAX_ARGUMENT_BYTES}-byte argument limit")));
        }
        Ok(Some(match js::type_of(env, v) {
            sys::ValueType::napi_undefined => return Ok(None),
            sys::ValueType::napi_null => Value::Null,
            sys::ValueType::napi_boolean => Value::Bool(js::get_bool(env, v).unwrap_or(false)),
            sys::ValueType::napi_number => {
                let n = js::get_number(env, v).unwrap_or(f64::NAN);
                if n.fract() == 0.0 && n.abs() < 9_007_199_254_740_992.0 {
                    Value::Number(Number::from(n as i64))
                } else {
                    Value::Number(Number::from_f64(n).ok_or_else(|| self.fail(format!("{n} is not a JSON number")))?)
                }
            }
            sys::ValueType::napi_string => {
                let text = js::get_string(env, v).unwrap_or_default();
                self.bytes += text.len();
                Value::String(text)
            }
            sys::ValueType::napi_bigint => return Err(self.fail("a BigInt is not JSON (convert it to a string or number)")),
            sys::ValueType::napi_symbol => return Err(self.fail("a Symbol is not JSON")),
            sys::ValueType::napi_function => return Err(self.fail("a function is not JSON")),
            sys::ValueType::napi_external => return Err(self.fail("a native external value is not JSON")),
            _ => return self.walk_object(v),
        }))
    }

    fn walk_object(&mut self, v: RawValue) -> Result<Option<Value>, NotJson> {
        let env = self.env;
        if self.ancestors.len() >= MAX_ARGUMENT_DEPTH {
            let cyclic = self.ancestors.iter().any(|a| js::strict_equals(env, *a, v));
            return Err(self.fail(if cyclic {
                "the value is cyclic (an object contains itself)".to_string()
            } else {
                format!("the value is nested deeper than {MAX_ARGUMENT_DEPTH} levels")
            }));
        }
        let is_array = js::is_array(env, v);
        let (to_json_fn, mut keys) = if is_array {
            (Some(js::get(env, v, c"toJSON")).filter(|f| js::is_function(env, *f)), None)
        } else {
            let k = self.keys(v, false)?;
            if js::is_function(env, k) {
                (Some(k), None)
            } else {
                (None, Some(k))
            }
        };
        if let Some(to_json_fn) = to_json_fn {
            let key = js::string(env, self.path.last().map_or("", String::as_str));
            let replaced = js::call(env, v, to_json_fn, &[key]).map_err(|_| self.fail("toJSON() threw"))?;
            if !js::strict_equals(env, replaced, v) {
                self.ancestors.push(v);
                let out = self.walk(replaced);
                self.ancestors.pop();
                return out;
            }
            if !is_array {
                keys = Some(self.keys(v, true)?);
            }
        }
        self.ancestors.push(v);
        let out = match keys {
            None => {
                let items = js::array_items(env, v).map_err(|i| {
                    self.path.push(i.to_string());
                    self.fail("the element could not be read")
                })?;
                let mut arr = Vec::with_capacity(items.len());
                for (i, item) in items.into_iter().enumerate() {
                    self.path.push(i.to_string());
                    arr.push(self.walk(item)?.unwrap_or(Value::Null));
                    self.path.pop();
                }
                Value::Array(arr)
            }
            Some(keys) => {
                let mut map = Map::new();
                for key in js::array_items(env, keys).map_err(|_| self.fail("its properties could not be read"))? {
                    let name = js::get_string(env, key).unwrap_or_default();
                    self.bytes += name.len() + 3;
                    let mut value = ptr::null_mut();
                    if unsafe { sys::napi_get_property(env, v, key, &mut value) } != sys::Status::napi_ok {
                        js::clear_exception(env);
                        return Err(self.fail(format!("property {name:?} could not be read")));
                    }
                    self.path.push(name);
                    let converted = self.walk(value)?;
                    let name = self.path.pop().unwrap_or_default();
                    if let Some(converted) = converted {
                        map.insert(name, converted);
                    }
                }
                Value::Object(map)
            }
        };
        self.ancestors.pop();
        Ok(Some(out))
    }
}

/// Builds a JS value from JSON.
pub fn from_json(env: RawEnv, v: &Value) -> RawValue {
    match v {
        Value::Null => js::null(env),
        Value::Bool(b) => js::boolean(env, *b),
        Value::Number(n) => js::number(env, n.as_f64().unwrap_or(f64::NAN)),
        Value::String(s) => js::string(env, s),
        Value::Array(items) => js::array(env, items.iter().map(|i| from_json(env, i))),
        Value::Object(map) => {
            let obj = js::object(env);
            for (k, v) in map {
                let key = js::string(env, k);
                let value = from_json(env, v);
                if k == "__proto__" {
                    // Assigning `__proto__` would set the object's prototype (letting a
                    // model-sent key pass validation as data and reach the handler as
                    // inherited properties); JSON.parse defines an own property instead.
                    let descriptor = sys::napi_property_descriptor {
                        utf8name: ptr::null(),
                        name: key,
                        method: None,
                        getter: None,
                        setter: None,
                        value,
                        attributes: sys::PropertyAttributes::writable
                            | sys::PropertyAttributes::enumerable
                            | sys::PropertyAttributes::configurable,
                        data: ptr::null_mut(),
                    };
                    unsafe { sys::napi_define_properties(env, obj, 1, &descriptor) };
                } else {
                    unsafe { sys::napi_set_property(env, obj, key, value) };
                }
            }
            obj
        }
    }
}

/// Reads an optional property as JSON.
pub fn get_json(env: RawEnv, obj: RawValue, key: &CStr) -> Result<Option<Value>, NotJson> {
    match js::get_opt(env, obj, key) {
        None => Ok(None),
        Some(v) => to_json(env, v).map(Some).map_err(|mut e| {
            e.path = format!("/{}{}", key.to_string_lossy(), e.path);
            e
        }),
    }
}
