//! The keys of `#[tool(...)]`: `name`, `description` and `example`.

use proc_macro2::{Span, TokenStream};
use syn::meta::ParseNestedMeta;
use syn::LitStr;

/// Longest tool name providers accept (the engine's `MAX_TOOL_NAME_LEN`).
const MAX_TOOL_NAME_LEN: usize = 64;

/// What `#[tool(...)]` said, each value with the span to blame.
#[derive(Default)]
pub struct ToolAttributes {
    pub name: Option<LitStr>,
    pub description: Option<LitStr>,
    /// Example arguments, each already checked to be a JSON object.
    pub examples: Vec<LitStr>,
}

impl ToolAttributes {
    /// Parses the tokens inside `#[tool(...)]`.
    ///
    /// # Errors
    /// An unknown or repeated key, a value that is not a string literal, an invalid
    /// tool name, or an example that is not a JSON object.
    pub fn parse(attr: TokenStream) -> syn::Result<Self> {
        let mut attrs = Self::default();
        let parser = syn::meta::parser(|meta| attrs.parse_key(meta));
        syn::parse::Parser::parse2(parser, attr)?;
        Ok(attrs)
    }

    fn parse_key(&mut self, meta: ParseNestedMeta<'_>) -> syn::Result<()> {
        let key = meta.path.get_ident().map(ToString::to_string).unwrap_or_default();
        match key.as_str() {
            "name" => {
                let value = string_value(&meta, "name")?;
                check_name(&value)?;
                set_once(&mut self.name, value, &meta, "name")
            }
            "description" => {
                let value = string_value(&meta, "description")?;
                if value.value().trim().is_empty() {
                    return Err(syn::Error::new(
                        value.span(),
                        "#[tool] `description` must not be empty: models choose tools by it",
                    ));
                }
                set_once(&mut self.description, value, &meta, "description")
            }
            "example" => {
                let value = string_value(&meta, "example")?;
                check_example(&value)?;
                self.examples.push(value);
                Ok(())
            }
            _ => Err(meta.error(format!(
                "unknown #[tool] attribute key `{}`; expected `name`, `description` or `example`",
                path_text(&meta.path)
            ))),
        }
    }
}

fn string_value(meta: &ParseNestedMeta<'_>, key: &str) -> syn::Result<LitStr> {
    let value = meta.value()?;
    value
        .parse::<LitStr>()
        .map_err(|e| syn::Error::new(e.span(), format!("#[tool] `{key}` takes a string literal: {key} = \"...\"")))
}

fn set_once(slot: &mut Option<LitStr>, value: LitStr, meta: &ParseNestedMeta<'_>, key: &str) -> syn::Result<()> {
    if slot.is_some() {
        return Err(meta.error(format!("#[tool] `{key}` is given more than once")));
    }
    *slot = Some(value);
    Ok(())
}

fn path_text(path: &syn::Path) -> String {
    path.segments.iter().map(|s| s.ident.to_string()).collect::<Vec<_>>().join("::")
}

/// Checks a tool name against `^[a-zA-Z0-9_-]{1,64}$`, as the registry will.
pub fn check_name_text(name: &str, span: Span) -> syn::Result<()> {
    let ok = !name.is_empty()
        && name.len() <= MAX_TOOL_NAME_LEN
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if ok {
        Ok(())
    } else {
        Err(syn::Error::new(
            span,
            format!("tool name {name:?} is invalid: use 1 to {MAX_TOOL_NAME_LEN} ASCII letters, digits, '_' or '-'"),
        ))
    }
}

fn check_name(lit: &LitStr) -> syn::Result<()> {
    check_name_text(&lit.value(), lit.span())
}

fn check_example(lit: &LitStr) -> syn::Result<()> {
    match serde_json::from_str::<serde_json::Value>(&lit.value()) {
        Ok(serde_json::Value::Object(_)) => Ok(()),
        Ok(_) => Err(syn::Error::new(
            lit.span(),
            "#[tool] `example` must be a JSON object of arguments, like \"{\\\"a\\\": 1}\"",
        )),
        Err(e) => Err(syn::Error::new(lit.span(), format!("#[tool] `example` is not valid JSON: {e}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use quote::quote;

    #[test]
    fn reads_every_key_and_repeated_examples() {
        let a = ToolAttributes::parse(quote!(
            name = "calc",
            description = "Does maths",
            example = "{\"a\": 1}",
            example = "{}"
        ))
        .unwrap();
        assert_eq!(a.name.unwrap().value(), "calc");
        assert_eq!(a.description.unwrap().value(), "Does maths");
        assert_eq!(a.examples.len(), 2);
        assert!(ToolAttributes::parse(TokenStream::new()).unwrap().name.is_none());
    }

    #[test]
    fn refuses_bad_values_with_a_reason() {
        for (tokens, expected) in [
            (quote!(nmae = "x"), "unknown #[tool] attribute key `nmae`"),
            (quote!(name = "a b"), "tool name \"a b\" is invalid"),
            (quote!(name = 3), "takes a string literal"),
            (quote!(name = "a", name = "b"), "more than once"),
            (quote!(description = "  "), "must not be empty"),
            (quote!(example = "[1]"), "must be a JSON object"),
            (quote!(example = "{a: 1}"), "not valid JSON"),
        ] {
            let e = ToolAttributes::parse(tokens).err().expect(expected);
            assert!(e.to_string().contains(expected), "{e} should contain {expected}");
        }
    }
}
