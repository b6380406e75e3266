//! Rust fns as tools: what `#[tool]` generates, how it is registered, and how a tool
//! reaches its cancellation token.
//!
//! `#[tool]` (from `toolhost-macros`, re-exported as [`crate::tool`]) turns a fn into a
//! [`ToolDefinition`]: a name, a declaration built from the argument type's
//! `schemars::JsonSchema`, and a [`ToolHandler`] that deserializes, calls and serializes.
//! [`ToolRegistry::register_tool`] and [`register_tools!`](crate::register_tools)
//! register definitions like any hand-written tool, so they run through the same
//! validation, retries, timeouts, cancellation and events.
//!
//! # Cancellation
//! A `#[tool]` fn takes only its arguments. While it runs under the engine, the call's
//! [`ToolContext`] is set for the running task: [`current_cancellation`] returns the
//! attempt's token (cancelled on `cancel`, on timeout, or when the session is
//! destroyed) and [`current_context`] the whole context. The value is task-local, so a
//! task the tool spawns must be handed the token explicitly.

use std::fmt;
use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use crate::declaration::ToolDeclaration;
use crate::error::RegistryError;
use crate::handler::{ToolContext, ToolHandler};
use crate::registry::ToolRegistry;

tokio::task_local! {
    static CONTEXT: ToolContext;
}

/// The cancellation token of the tool call running on this task, `None` outside one.
///
/// Inside a `#[tool]` fn run by the engine this is the attempt's token: long-running
/// work should watch it, for example in a `tokio::select!` against
/// `token.cancelled()`.
pub fn current_cancellation() -> Option<CancellationToken> {
    CONTEXT.try_with(|ctx| ctx.cancellation.clone()).ok()
}

/// The [`ToolContext`] of the tool call running on this task (execution id, attempt
/// number, session...), `None` outside one.
pub fn current_context() -> Option<ToolContext> {
    CONTEXT.try_with(Clone::clone).ok()
}

/// A tool written in Rust: its name, declaration and handler, as `#[tool]` generates
/// it (the constant `<fn>_tool`, or `<fn>_tool::definition()`).
#[derive(Clone, Copy)]
pub struct ToolDefinition {
    name: &'static str,
    declaration: fn() -> ToolDeclaration,
    handler: fn() -> Arc<dyn ToolHandler>,
}

impl ToolDefinition {
    /// A definition from its parts; `#[tool]` calls this, and so may hand-written
    /// tools that want [`ToolRegistry::register_tool`].
    pub const fn new(
        name: &'static str,
        declaration: fn() -> ToolDeclaration,
        handler: fn() -> Arc<dyn ToolHandler>,
    ) -> Self {
        Self { name, declaration, handler }
    }

    pub fn name(&self) -> &'static str {
        self.name
    }

    /// The declaration, built afresh (the schema is generated on each call).
    pub fn declaration(&self) -> ToolDeclaration {
        (self.declaration)()
    }

    pub fn handler(&self) -> Arc<dyn ToolHandler> {
        (self.handler)()
    }
}

impl fmt::Debug for ToolDefinition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolDefinition").field("name", &self.name).finish_non_exhaustive()
    }
}

impl ToolRegistry {
    /// Registers a `#[tool]` fn globally: `registry.register_tool(add_tool)`.
    ///
    /// # Errors
    /// As [`ToolRegistry::register`].
    pub fn register_tool(&self, tool: ToolDefinition) -> Result<ToolDeclaration, RegistryError> {
        self.register(tool.declaration(), tool.handler())
    }

    /// Registers several tools globally, all or none: when one is refused, the ones
    /// registered before it are removed again. [`register_tools!`](crate::register_tools)
    /// calls this.
    ///
    /// # Errors
    /// The first refusal, as [`ToolRegistry::register`].
    pub fn register_tools(&self, tools: &[ToolDefinition]) -> Result<Vec<ToolDeclaration>, RegistryError> {
        let mut declarations = Vec::with_capacity(tools.len());
        for tool in tools {
            match self.register_tool(*tool) {
                Ok(d) => declarations.push(d),
                Err(e) => {
                    for d in &declarations {
                        self.unregister(&d.name);
                    }
                    return Err(e);
                }
            }
        }
        Ok(declarations)
    }
}

/// Registers `#[tool]` fns globally, all or none, and returns their declarations.
///
/// ```
/// use schemars::JsonSchema;
/// use serde::Deserialize;
///
/// #[derive(Deserialize, JsonSchema)]
/// struct Args {
///     text: String,
/// }
///
/// /// Upper-cases a text
/// #[toolhost::tool]
/// fn shout(args: Args) -> String {
///     args.text.to_uppercase()
/// }
///
/// /// Counts the characters of a text
/// #[toolhost::tool]
/// fn count(args: Args) -> usize {
///     args.text.chars().count()
/// }
///
/// fn main() -> Result<(), toolhost::RegistryError> {
///     let registry = toolhost::ToolRegistry::new();
///     let declarations = toolhost::register_tools!(registry, shout_tool, count_tool)?;
///     assert_eq!(declarations.len(), 2);
///     Ok(())
/// }
/// ```
///
/// # Errors
/// Evaluates to `Result<Vec<ToolDeclaration>, RegistryError>`; see
/// [`ToolRegistry::register_tools`].
#[macro_export]
macro_rules! register_tools {
    ($registry:expr, $($tool:path),+ $(,)?) => {
        $crate::ToolRegistry::register_tools(&$registry, &[$($tool),+])
    };
}

/// What the code `#[tool]` generates calls. Not a public API.
#[doc(hidden)]
// These return what a handler returns, `Result<Value, ToolError>`; boxing the error here
// would only be unboxed again at once.
#[allow(clippy::result_large_err)]
pub mod __private {
    use std::fmt::Display;
    use std::future::Future;

    use serde::de::DeserializeOwned;
    use serde::Serialize;
    use serde_json::Value;

    pub use crate::handler::handler_fn;
    pub use schemars;
    pub use serde_json;

    use crate::declaration::ToolDeclaration;
    use crate::error::{ErrorCategory, ToolError};
    use crate::handler::ToolContext;

    /// The declaration of a `#[tool]` fn; `examples` were checked to be JSON objects
    /// at compile time.
    pub fn declaration(name: &str, description: &str, schema: schemars::Schema, examples: &[&str]) -> ToolDeclaration {
        let mut d = ToolDeclaration::new(name, description, schema.to_value());
        if !examples.is_empty() {
            let parsed = examples.iter().filter_map(|e| serde_json::from_str::<Value>(e).ok()).collect();
            d.metadata.extra.insert("examples".into(), Value::Array(parsed));
        }
        d
    }

    /// Finds a `#[tool]` fn's output schema: `(&OutputProbe::<T>::new()).output_schema()`
    /// is the schema of `T` when `T: JsonSchema`, and `None` otherwise.
    pub struct OutputProbe<T>(std::marker::PhantomData<T>);

    impl<T> OutputProbe<T> {
        #[allow(clippy::new_without_default)]
        pub fn new() -> Self {
            Self(std::marker::PhantomData)
        }
    }

    pub trait OutputSchemaOf {
        fn output_schema(&self) -> Option<Value>;
    }

    impl<T: schemars::JsonSchema> OutputSchemaOf for OutputProbe<T> {
        /// How `T` serializes, not how it deserializes (`schema_for!`'s contract): a
        /// field with `skip_serializing_if` and no `serde(default)` is required to be
        /// read but may be left out when written, and `rename(serialize = ..)` names it
        /// differently. The engine checks the serialized result against this.
        fn output_schema(&self) -> Option<Value> {
            let generator = schemars::generate::SchemaSettings::draft2020_12().for_serialize().into_generator();
            Some(generator.into_root_schema_for::<T>().to_value())
        }
    }

    pub trait OutputSchemaFallback {
        fn output_schema(&self) -> Option<Value>;
    }

    impl<T> OutputSchemaFallback for &OutputProbe<T> {
        fn output_schema(&self) -> Option<Value> {
            None
        }
    }

    /// Runs a tool call with its context readable through `current_cancellation`.
    pub fn in_tool_context<F>(ctx: ToolContext, call: F) -> impl Future<Output = F::Output> + Send + 'static
    where
        F: Future + Send + 'static,
    {
        super::CONTEXT.scope(ctx, call)
    }

    /// The arguments as the fn's argument type. The engine validated them against the
    /// schema first, so this fails only where serde is stricter than the schema.
    /// The fn's argument from the validated JSON. What its `Deserialize` refuses though
    /// the schema accepted it (`1.0` for an `i32`, `3e9` past its range) is named by its
    /// JSON pointer, as a validation issue is: without it the model read only "invalid
    /// type: floating point `1.0`, expected i32", with no field.
    pub fn arguments<A: DeserializeOwned>(tool: &str, args: Value) -> Result<A, ToolError> {
        serde_path_to_error::deserialize(args).map_err(|e| {
            let mut at = String::new();
            for segment in e.path().iter() {
                at.push('/');
                match segment {
                    serde_path_to_error::Segment::Seq { index } => at.push_str(&index.to_string()),
                    serde_path_to_error::Segment::Map { key } => at.push_str(&key.replace('~', "~0").replace('/', "~1")),
                    serde_path_to_error::Segment::Enum { variant } => at.push_str(variant),
                    serde_path_to_error::Segment::Unknown => at.push('?'),
                }
            }
            let at = if at.is_empty() { String::new() } else { format!("{at}: ") };
            ToolError::new(
                ErrorCategory::Validation,
                "INVALID_ARGUMENTS",
                format!("invalid arguments for tool '{tool}': {at}{}", e.inner()),
            )
        })
    }

    pub fn value_output<T: Serialize>(value: T) -> Result<Value, ToolError> {
        serde_json::to_value(value)
            .map_err(|e| ToolError::execution(format!("the tool's result could not be serialized: {e}")))
    }

    /// `Ok` serialized; `Err` as a [`ToolError`] of category `execution`, or kept as
    /// it is when it already is a `ToolError`.
    pub fn result_output<T: Serialize, E: Display + 'static>(result: Result<T, E>) -> Result<Value, ToolError> {
        match result {
            Ok(value) => value_output(value),
            Err(e) => Err(super::tool_error_in(&e).unwrap_or_else(|| ToolError::execution(e.to_string()))),
        }
    }
}

/// The [`ToolError`] an error is, or wraps as the error types a `#[tool]` fn returns do
/// (`anyhow::Error`, a boxed `dyn Error`): `Err(ToolError::transient(..))?` in a fn of
/// `anyhow::Result` must keep its category, or it is never retried. The context anyhow
/// added around it (`.context("looking up order 42")`) comes before its message, as
/// anyhow's `{:#}` shows a chain: it is the part the tool's author wrote for this call.
fn tool_error_in<E: 'static>(e: &E) -> Option<crate::ToolError> {
    let any = e as &dyn std::any::Any;
    if let Some(t) = any.downcast_ref::<crate::ToolError>() {
        return Some(t.clone());
    }
    if let Some(a) = any.downcast_ref::<anyhow::Error>() {
        let mut t = a.downcast_ref::<crate::ToolError>()?.clone();
        let context: Vec<String> = a.chain().take_while(|link| !link.is::<crate::ToolError>()).map(ToString::to_string).collect();
        if !context.is_empty() {
            t.message = format!("{}: {}", context.join(": "), t.message);
        }
        return Some(t);
    }
    if let Some(b) = any.downcast_ref::<Box<dyn std::error::Error + Send + Sync>>() {
        return b.downcast_ref::<crate::ToolError>().cloned();
    }
    if let Some(b) = any.downcast_ref::<Box<dyn std::error::Error + Send>>() {
        return b.downcast_ref::<crate::ToolError>().cloned();
    }
    any.downcast_ref::<Box<dyn std::error::Error>>().and_then(|b| b.downcast_ref::<crate::ToolError>()).cloned()
}
