//! JS values kept inside engine records: results and original errors.

use std::sync::Arc;

use toolhost::{ErrorCause, Payload};

use crate::js::{JsRef, RawEnv, RawValue};

/// A JS value held by the engine as an opaque [`Payload`] or [`ErrorCause`].
pub struct JsPayload(pub JsRef);

pub fn payload(env: RawEnv, v: RawValue) -> Payload {
    Arc::new(JsPayload(JsRef::new(env, v)))
}

pub fn cause(env: RawEnv, v: RawValue) -> ErrorCause {
    Arc::new(JsPayload(JsRef::new(env, v)))
}

/// The JS value of a payload: the kept JS value, or JSON built anew (Rust results).
pub fn payload_value(env: RawEnv, p: &(dyn std::any::Any + Send + Sync)) -> RawValue {
    if let Some(js) = p.downcast_ref::<JsPayload>() {
        js.0.value(env)
    } else if let Some(v) = p.downcast_ref::<serde_json::Value>() {
        crate::json::from_json(env, v)
    } else {
        crate::js::undefined(env)
    }
}
