//! What a `#[tool]` fn's signature must look like, and what the expansion needs from it.

use syn::{FnArg, GenericArgument, PathArguments, ReturnType, Signature, Type};

/// How the fn's return value becomes the tool's result.
pub enum Output {
    /// `Result<T, E>` (or a `Result<T>` alias): `Ok` is serialized, `Err` becomes a `ToolError`.
    Result,
    /// Any other `T: Serialize`, including `()` for a fn with no return type.
    Value,
}

/// The parts of a checked signature the expansion uses.
pub struct ToolSignature {
    pub arg_type: Type,
    pub output: Output,
    pub is_async: bool,
    /// The type of a successful result (`T` of `Result<T, E>`, or the return type), whose
    /// `JsonSchema`, when it has one, becomes the tool's output schema. `None` for `()`.
    pub ok_type: Option<Type>,
}

/// Checks a `#[tool]` fn's signature, reporting every problem at its own span.
///
/// # Errors
/// No argument or more than one, a `self` receiver, generics or a `where` clause,
/// `unsafe`, a borrowed or `impl Trait` argument, or an unsupported return type.
pub fn check(sig: &Signature) -> syn::Result<ToolSignature> {
    let mut errors = Vec::new();
    if sig.unsafety.is_some() {
        errors.push(syn::Error::new_spanned(
            sig.unsafety,
            "#[tool] cannot be used on an `unsafe fn`: the engine calls tools from safe code",
        ));
    }
    if !sig.generics.params.is_empty() {
        errors.push(syn::Error::new_spanned(
            &sig.generics,
            "#[tool] fns cannot be generic: the input schema is generated from one concrete argument type",
        ));
    }
    if let Some(clause) = &sig.generics.where_clause {
        errors.push(syn::Error::new_spanned(
            clause,
            "#[tool] fns cannot have a `where` clause: the argument type must be concrete",
        ));
    }
    let arg_type = match check_inputs(sig) {
        Ok(ty) => Some(ty),
        Err(e) => {
            errors.push(e);
            None
        }
    };
    let output = match check_output(&sig.output) {
        Ok(output) => Some(output),
        Err(e) => {
            errors.push(e);
            None
        }
    };
    if let Some(mut combined) = errors.pop() {
        // Report in source order.
        for e in errors.into_iter().rev() {
            let mut first = e;
            first.combine(combined);
            combined = first;
        }
        return Err(combined);
    }
    Ok(ToolSignature {
        arg_type: arg_type.expect("no error means an argument type"),
        output: output.expect("no error means an output"),
        is_async: sig.asyncness.is_some(),
        ok_type: ok_type(&sig.output),
    })
}

fn check_inputs(sig: &Signature) -> syn::Result<Type> {
    if let Some(receiver) = sig.receiver() {
        return Err(syn::Error::new_spanned(
            receiver,
            "#[tool] cannot be used on a method: write a free fn taking the arguments struct as its only parameter, and keep shared state in a static (a `OnceLock`, say) or implement `ToolHandler` by hand",
        ));
    }
    let mut inputs = sig.inputs.iter();
    let Some(first) = inputs.next() else {
        return Err(syn::Error::new(
            sig.paren_token.span.join(),
            "#[tool] fns take exactly one argument, a struct deriving `Deserialize` and `JsonSchema`; this fn takes none",
        ));
    };
    if inputs.next().is_some() {
        let extra: Vec<&FnArg> = sig.inputs.iter().skip(1).collect();
        return Err(syn::Error::new_spanned(
            quote::quote!(#(#extra),*),
            format!(
                "#[tool] fns take exactly one argument, a struct deriving `Deserialize` and `JsonSchema`; this fn takes {}. Move the other parameters into that struct as fields (the cancellation token comes from `toolhost::current_cancellation()`)",
                sig.inputs.len()
            ),
        ));
    }
    let FnArg::Typed(arg) = first else { unreachable!("receivers were handled above") };
    match &*arg.ty {
        Type::Reference(r) => Err(syn::Error::new_spanned(
            r,
            "#[tool] arguments are deserialized from JSON into an owned value: take the type by value, not by reference",
        )),
        Type::ImplTrait(t) => Err(syn::Error::new_spanned(
            t,
            "#[tool] fns cannot take `impl Trait`: the input schema is generated from one concrete argument type",
        )),
        ty => Ok(ty.clone()),
    }
}

fn check_output(output: &ReturnType) -> syn::Result<Output> {
    let ty = match output {
        ReturnType::Default => return Ok(Output::Value),
        ReturnType::Type(_, ty) => &**ty,
    };
    let unsupported = |what: &str| {
        syn::Error::new_spanned(
            ty,
            format!(
                "#[tool] fns cannot return {what}: return `Result<T, E>` with `T: Serialize` and `E: Display`, or a plain `T: Serialize`"
            ),
        )
    };
    match ty {
        Type::ImplTrait(_) => Err(unsupported("`impl Trait` (the result is serialized, so name a concrete type)")),
        Type::TraitObject(_) => Err(unsupported("a trait object")),
        Type::Never(_) => Err(unsupported("`!`")),
        Type::BareFn(_) => Err(unsupported("a fn pointer")),
        Type::Ptr(_) => Err(unsupported("a raw pointer")),
        Type::Infer(_) => Err(unsupported("`_`")),
        Type::Path(p) if p.qself.is_none() => Ok(match p.path.segments.last() {
            Some(last) if last.ident == "Result" && result_arity(&last.arguments).is_some() => Output::Result,
            _ => Output::Value,
        }),
        _ => Ok(Output::Value),
    }
}

/// The type a successful call returns: `T` of `Result<T, E>` (or of a `Result<T>`
/// alias), or the return type itself; `None` for no return type or `()`.
fn ok_type(output: &ReturnType) -> Option<Type> {
    let ReturnType::Type(_, ty) = output else { return None };
    let ok = match &**ty {
        Type::Path(p) if p.qself.is_none() => match p.path.segments.last() {
            Some(last) if last.ident == "Result" && result_arity(&last.arguments).is_some() => {
                let PathArguments::AngleBracketed(args) = &last.arguments else { return None };
                args.args.iter().find_map(|a| match a {
                    GenericArgument::Type(t) => Some(t.clone()),
                    _ => None,
                })?
            }
            _ => (**ty).clone(),
        },
        other => other.clone(),
    };
    match &ok {
        Type::Tuple(t) if t.elems.is_empty() => None,
        _ => Some(ok),
    }
}

/// The number of type arguments of a `Result<...>` segment, when it has one or two.
fn result_arity(args: &PathArguments) -> Option<usize> {
    let PathArguments::AngleBracketed(args) = args else { return None };
    let types = args.args.iter().filter(|a| matches!(a, GenericArgument::Type(_))).count();
    (1..=2).contains(&types).then_some(types)
}

#[cfg(test)]
mod tests {
    use super::*;
    use syn::parse_quote;

    fn sig(item: syn::ItemFn) -> syn::Result<ToolSignature> {
        check(&item.sig)
    }

    #[test]
    fn tells_results_from_plain_values() {
        let s = sig(parse_quote!(
            async fn f(a: Args) -> Result<Out, String> {}
        ))
        .unwrap();
        assert!(matches!(s.output, Output::Result) && s.is_async);
        assert!(matches!(
            sig(parse_quote!(
                fn f(a: Args) -> anyhow::Result<Out> {}
            ))
            .unwrap()
            .output,
            Output::Result
        ));
        assert!(matches!(
            sig(parse_quote!(
                fn f(a: Args) -> Vec<Out> {}
            ))
            .unwrap()
            .output,
            Output::Value
        ));
        assert!(matches!(
            sig(parse_quote!(
                fn f(a: Args) {}
            ))
            .unwrap()
            .output,
            Output::Value
        ));
    }

    #[test]
    fn reports_every_problem_at_once() {
        let e = sig(parse_quote!(
            fn f<T>() -> impl Serialize {}
        ))
        .err()
        .unwrap();
        let messages: Vec<String> = e.into_iter().map(|e| e.to_string()).collect();
        assert_eq!(messages.len(), 3, "{messages:?}");
        assert!(messages[0].contains("generic"));
        assert!(messages[1].contains("this fn takes none"));
        assert!(messages[2].contains("`impl Trait`"));
    }

    #[test]
    fn refuses_borrowed_and_unsafe() {
        assert!(sig(parse_quote!(
            fn f(a: &Args) {}
        ))
        .err()
        .unwrap()
        .to_string()
        .contains("by value"));
        assert!(sig(parse_quote!(
            unsafe fn f(a: Args) {}
        ))
        .err()
        .unwrap()
        .to_string()
        .contains("unsafe"));
    }
}
