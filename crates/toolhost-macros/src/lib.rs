//! The `#[tool]` attribute of toolhost, re-exported as `toolhost::tool`.
//!
//! This crate only turns tokens into tokens: [`expand`](crate::expand) works on
//! `proc_macro2` streams so it can be read and tested without a compiler plugin, and
//! the generated code calls into `toolhost::__private`, so users need only `toolhost`
//! (plus `serde` and `schemars` for their own derives) in scope.

mod attributes;
mod expand;
mod signature;

use proc_macro::TokenStream;

/// Turns a fn into a toolhost tool: the input schema comes from the argument type's
/// `schemars::JsonSchema`, the handler deserializes, calls the fn and serializes.
///
/// ```
/// use schemars::JsonSchema;
/// use serde::Deserialize;
/// use toolhost::tool;
///
/// #[derive(Deserialize, JsonSchema)]
/// struct AddArgs {
///     /// First operand
///     a: i64,
///     /// Second operand
///     b: i64,
/// }
///
/// /// Adds two integers
/// #[tool]
/// fn add(args: AddArgs) -> i64 {
///     args.a + args.b
/// }
///
/// fn main() {
///     let registry = toolhost::ToolRegistry::new();
///     let declaration = registry.register_tool(add_tool).unwrap();
///     assert_eq!(declaration.name, "add");
///     assert_eq!(declaration.description, "Adds two integers");
///     assert_eq!(add_tool::NAME, "add");
/// }
/// ```
///
/// # Accepted fns
/// A sync or `async` fn, not generic, not a method, taking exactly one argument whose
/// type implements `serde::de::DeserializeOwned + schemars::JsonSchema`, and returning
/// either `Result<T, E>` (`T: Serialize`, `E: Display`) or a plain `T: Serialize`.
/// An `Err` becomes a `ToolError` of category `execution`, unless `E` is `ToolError`
/// itself, which is kept as it is (so a tool can ask for a retry with
/// `ToolError::transient`).
///
/// # Attribute keys
/// - `name = "..."`: the tool name (default: the fn's name);
/// - `description = "..."`: what the model reads (default: the fn's doc comment; one
///   of the two is required);
/// - `example = "{...}"`: example arguments as a JSON object, checked at compile time;
///   repeat the key for several. They go to `metadata.extra["examples"]`.
///
/// # Generated items
/// Beside the fn, which is kept as it is, the attribute generates a module
/// `<fn>_tool` with `NAME`, `declaration()`, `handler()` and `definition()`, and a
/// constant of the same name holding the [`ToolDefinition`](../toolhost/tool_definition/struct.ToolDefinition.html),
/// so `registry.register_tool(add_tool)` and `toolhost::register_tools!(registry, add_tool)`
/// read as if the module were passed. The generated items refer to the fn's scope
/// through `super`, so `#[tool]` belongs on a fn at module level, not inside a fn body
/// (where the module could not see the fn: the error is then "cannot find value
/// `<fn>_tool` in module `super`").
#[proc_macro_attribute]
pub fn tool(attr: TokenStream, item: TokenStream) -> TokenStream {
    let item = proc_macro2::TokenStream::from(item);
    match expand::expand(attr.into(), item.clone()) {
        Ok(tokens) => tokens.into(),
        Err(error) => {
            // Keep the fn itself so one mistake does not cascade into "cannot find
            // function" errors at every call site.
            let mut tokens = error.into_compile_error();
            tokens.extend(item);
            tokens.into()
        }
    }
}
