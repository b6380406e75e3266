//! Compile-fail cases: each `#[tool]` misuse fails with a message at the offending span.

#[test]
fn misuses_fail_to_compile_with_clear_messages() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("tests/ui/*.rs");
}
