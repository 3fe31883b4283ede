//! The hooks' closures, given the parameter types the user left out.

use proc_macro2::TokenStream;
use quote::ToTokens;
use syn::{Expr, Pat, Type};

// Input:  the value of `when`, `when_ok`, `on_retry` or `on_giveup`, and the
//         types of the parameters the call passes.
// Output: a closure with a type on each parameter the user left without one
//         (`|e| ..` and `|e: &_| ..` become `|e: &E| ..`), so its body can
//         use them; any other value unchanged. A parameter written with
//         another type is reported where the loop calls the hook, in the
//         argument's terms.
pub(super) fn typed_closure(expr: &Expr, types: &[&TokenStream]) -> TokenStream {
    let Expr::Closure(closure) = crate::attr::ungrouped(expr) else {
        return expr.to_token_stream();
    };
    let mut closure = closure.clone();
    for (input, ty) in closure.inputs.iter_mut().zip(types) {
        let ty = Box::new(Type::Verbatim((*ty).clone()));
        match input {
            Pat::Type(typed) if is_inferred(&typed.ty) => typed.ty = ty,
            Pat::Type(_) => {}
            _ => {
                *input = Pat::Type(syn::PatType {
                    attrs: Vec::new(),
                    pat: Box::new(input.clone()),
                    colon_token: Default::default(),
                    ty,
                });
            }
        }
    }
    closure.to_token_stream()
}

/// `_` or `&_`: a type the user left to inference.
fn is_inferred(ty: &Type) -> bool {
    match ty {
        Type::Infer(_) => true,
        Type::Reference(r) => r.mutability.is_none() && matches!(*r.elem, Type::Infer(_)),
        Type::Group(g) => is_inferred(&g.elem),
        Type::Paren(p) => is_inferred(&p.elem),
        _ => false,
    }
}
