//! Session visibility, shadowing and destroy semantics, through the engine alone.

use std::sync::{Arc, Mutex};

use serde_json::{json, Value};
use toolhost::{CallOptions, ManagerConfig, Scope, ToolDeclaration, ToolExecutor, ToolRegistry};

fn decl(name: &str) -> ToolDeclaration {
    ToolDeclaration::new(name, format!("the {name} tool"), json!({"type": "object"}))
}

fn register(registry: &ToolRegistry, scope: Scope<'_>, name: &str, answer: &'static str) {
    let handler = toolhost::handler_fn(move |_args: Value, _ctx| async move { Ok(json!(answer)) });
    registry.register_in(scope, decl(name), handler).unwrap();
}

#[test]
fn session_tools_are_invisible_elsewhere_and_global_tools_are_shared() {
    let registry = ToolRegistry::new();
    register(&registry, Scope::Global, "search", "global");
    let a = registry.create_session(false);
    let b = registry.create_session(false);
    register(&registry, Scope::Session(&a), "read_cart", "a");

    assert!(registry.resolve(Scope::Session(&a), "read_cart").is_ok());
    assert_eq!(registry.resolve(Scope::Session(&b), "read_cart").unwrap_err().code(), "TOOL_NOT_FOUND");
    assert_eq!(registry.resolve(Scope::Global, "read_cart").unwrap_err().code(), "TOOL_NOT_FOUND");
    assert!(!registry.names().contains(&"read_cart".to_string()));
    assert!(registry.resolve(Scope::Session(&b), "search").is_ok(), "global tools are visible in sessions");
    let names: Vec<_> = registry.visible(Scope::Session(&a)).unwrap().iter().map(|t| t.name().to_string()).collect();
    assert_eq!(names, vec!["read_cart", "search"]);
}

#[test]
fn isolated_sessions_do_not_see_global_tools() {
    let registry = ToolRegistry::new();
    register(&registry, Scope::Global, "search", "global");
    let s = registry.create_session(true);
    assert_eq!(registry.resolve(Scope::Session(&s), "search").unwrap_err().code(), "TOOL_NOT_FOUND");
    assert!(registry.visible(Scope::Session(&s)).unwrap().is_empty());
}

#[test]
fn a_session_tool_shadows_a_global_tool_inside_the_session_only() {
    let registry = ToolRegistry::new();
    register(&registry, Scope::Global, "search", "global");
    let s = registry.create_session(false);
    register(&registry, Scope::Session(&s), "search", "session");
    let inside = registry.resolve(Scope::Session(&s), "search").unwrap();
    assert_eq!(inside.session_id.as_deref(), Some(s.as_str()));
    assert!(registry.resolve(Scope::Global, "search").unwrap().session_id.is_none());
    assert_eq!(registry.visible(Scope::Session(&s)).unwrap().len(), 1, "the shadowed global is listed once");
}

#[test]
fn destroy_frees_tools_notifies_once_and_is_a_no_op_after() {
    let registry = ToolRegistry::new();
    let changes = Arc::new(Mutex::new(Vec::new()));
    let seen = changes.clone();
    registry.subscribe(move |c| seen.lock().unwrap().push((c.action, c.session_id.clone(), c.tool_names.clone())));
    let s = registry.create_session(false);
    register(&registry, Scope::Session(&s), "read_cart", "a");
    assert!(registry.destroy_session(&s));
    assert!(!registry.destroy_session(&s), "destroying again does nothing");
    assert_eq!(registry.resolve(Scope::Session(&s), "read_cart").unwrap_err().code(), "SESSION_NOT_FOUND");
    assert!(!registry.sessions().contains(&s));
    let changes = changes.lock().unwrap();
    let destroyed: Vec<_> = changes.iter().filter(|c| c.0 == "session-destroyed").collect();
    assert_eq!(destroyed.len(), 1);
    assert_eq!(destroyed[0].1.as_deref(), Some(s.as_str()));
    assert_eq!(destroyed[0].2, vec!["read_cart".to_string()]);
}

#[tokio::test]
async fn executing_in_a_session_resolves_there_and_unknown_sessions_are_not_found() {
    let registry = ToolRegistry::new();
    register(&registry, Scope::Global, "search", "global");
    let s = registry.create_session(false);
    register(&registry, Scope::Session(&s), "search", "session");
    let executor = ToolExecutor::new(registry.clone(), ManagerConfig::default()).unwrap();
    let in_session = CallOptions { session_id: Some(s.clone()), ..Default::default() };
    assert_eq!(executor.execute("search", json!({}), in_session.clone()).await.result().unwrap(), &json!("session"));
    assert_eq!(executor.execute("search", json!({}), CallOptions::default()).await.result().unwrap(), &json!("global"));
    registry.destroy_session(&s);
    let gone = executor.execute("search", json!({}), in_session).await;
    let e = gone.result().unwrap_err();
    assert_eq!((e.category.as_str(), e.code.as_str()), ("not_found", "SESSION_NOT_FOUND"));
}

#[tokio::test]
async fn destroy_cancels_the_sessions_executions_in_flight() {
    let registry = ToolRegistry::new();
    let s = registry.create_session(false);
    let handler = toolhost::handler_fn(|_args: Value, ctx: toolhost::ToolContext| async move {
        ctx.cancellation.cancelled().await;
        Ok(json!("never"))
    });
    registry.register_in(Scope::Session(&s), decl("wait"), handler).unwrap();
    let executor = ToolExecutor::new(registry.clone(), ManagerConfig::default()).unwrap();
    let running = {
        let executor = executor.clone();
        let s = s.clone();
        tokio::spawn(async move { executor.execute("wait", json!({}), CallOptions { session_id: Some(s), ..Default::default() }).await })
    };
    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    registry.destroy_session(&s);
    let outcome = running.await.unwrap();
    assert_eq!(outcome.record.status.as_str(), "cancelled");
    assert_eq!(outcome.result().unwrap_err().code, "CANCELLED");
}

fn breaking(name: &str) -> ToolDeclaration {
    let mut d = decl(name);
    d.metadata.circuit_breaker = Some(toolhost::CircuitBreakerConfig { failure_threshold: 2, recovery_timeout_ms: 60_000, success_threshold: 1 });
    d
}

fn register_failing(registry: &ToolRegistry, scope: Scope<'_>, name: &str) {
    let handler = toolhost::handler_fn(|_args: Value, _ctx| async move { Err::<Value, _>(toolhost::ToolError::permanent("down")) });
    registry.register_in(scope, breaking(name), handler).unwrap();
}

/// A session's tool is not another session's (or a global) tool of the same name: the
/// circuit a destroyed session's broken handler opened refused a later session's working
/// tool with CIRCUIT_OPEN (soak repro: user B's `read_cart`, after user A's session).
#[tokio::test]
async fn each_session_tool_has_its_own_circuit_breaker_which_goes_with_the_session() {
    let registry = ToolRegistry::new();
    let executor = ToolExecutor::new(registry.clone(), ManagerConfig::default()).unwrap();
    let working = |registry: &ToolRegistry, scope: Scope<'_>| {
        let handler = toolhost::handler_fn(|_args: Value, _ctx| async move { Ok(json!(["book"])) });
        registry.register_in(scope, breaking("read_cart"), handler).unwrap();
    };
    let a = registry.create_session(false);
    register_failing(&registry, Scope::Session(&a), "read_cart");
    let in_a = CallOptions { session_id: Some(a.clone()), ..Default::default() };
    for _ in 0..2 {
        assert_eq!(executor.execute("read_cart", json!({}), in_a.clone()).await.result().unwrap_err().code, "PERMANENT_ERROR");
    }
    assert_eq!(executor.execute("read_cart", json!({}), in_a.clone()).await.result().unwrap_err().code, "CIRCUIT_OPEN");
    // Another live session's tool and a global tool of the same name run.
    let b = registry.create_session(false);
    working(&registry, Scope::Session(&b));
    let in_b = CallOptions { session_id: Some(b.clone()), ..Default::default() };
    assert_eq!(executor.execute("read_cart", json!({}), in_b).await.result().unwrap(), &json!(["book"]));
    working(&registry, Scope::Global);
    assert_eq!(executor.execute("read_cart", json!({}), CallOptions::default()).await.result().unwrap(), &json!(["book"]));
    // After A's destroy, a later session's tool starts closed.
    registry.destroy_session(&a);
    let c = registry.create_session(true);
    working(&registry, Scope::Session(&c));
    let in_c = CallOptions { session_id: Some(c.clone()), ..Default::default() };
    assert_eq!(executor.execute("read_cart", json!({}), in_c).await.result().unwrap(), &json!(["book"]));
}

/// A session's own tools' statistics go with the session (soak repro: a tool named for
/// its user, failed once, kept its statistics and last error for every session ever);
/// a global tool's, counted in the session too, stay.
#[tokio::test]
async fn destroy_frees_the_statistics_of_the_sessions_own_tools() {
    let registry = ToolRegistry::new();
    let executor = ToolExecutor::new(registry.clone(), ManagerConfig::default()).unwrap();
    register(&registry, Scope::Global, "now", "noon");
    let s = registry.create_session(false);
    register_failing(&registry, Scope::Session(&s), "cart_of_user_7");
    let in_s = CallOptions { session_id: Some(s.clone()), ..Default::default() };
    assert!(executor.execute("cart_of_user_7", json!({}), in_s.clone()).await.result().is_err());
    assert!(executor.execute("now", json!({}), in_s.clone()).await.result().is_ok());
    assert_eq!(executor.stats("cart_of_user_7").failure_count, 1);
    registry.destroy_session(&s);
    let gone = executor.stats("cart_of_user_7");
    assert_eq!((gone.execution_count, gone.last_error.is_none()), (0, true));
    assert_eq!(executor.stats("now").success_count, 1);
    assert!(executor.execute("cart_of_user_7", json!({}), in_s).await.result().is_err());
    assert_eq!(executor.stats("cart_of_user_7").execution_count, 0, "a call in a destroyed session counts for no tool");
}
