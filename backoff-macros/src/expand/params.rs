//! The shapes of real functions: what each attempt starts with (reborrows
//! of `&mut` parameters, `mut` clones), the body's type with `impl Trait`
//! inferred, `clone(self)`'s renaming, and bodies other attributes rewrote.

use proc_macro2::{Delimiter, Group, TokenStream, TokenTree};
use syn::{Ident, Pat, Signature, Type, TypeReference};

use crate::attr::RetryArgs;
use crate::valid;

/// Whether `#[tracing::instrument]` has already rewritten this `async fn`'s
/// body (it was placed above `#[retry]`): the body then moves the arguments
/// into a future of its own.
pub(super) fn instrumented(body: TokenStream) -> bool {
    // (`tracing-attributes` binds it among the body's first statements:
    // the body's own tokens, not those of nested blocks, are enough.)
    body.into_iter().any(|token| match token {
        TokenTree::Ident(ident) => ident == "__tracing_instrument_future",
        TokenTree::Group(group) if group.delimiter() == proc_macro2::Delimiter::Brace => {
            // The body itself, as `Block::to_tokens` prints it.
            group.stream().into_iter().any(
                |t| matches!(t, TokenTree::Ident(ident) if ident == "__tracing_instrument_future"),
            )
        }
        _ => false,
    })
}

/// A `&mut` parameter bound by name, reborrowed by each attempt.
pub(super) struct Reborrow {
    /// The parameter's `mut`, moved from the signature to the reborrow.
    pub(super) mutability: Option<syn::token::Mut>,
    pub(super) name: Ident,
}

// Input:  fn f(mut dst: &mut [u8], out: &mut u32, n: usize)
// Output: fn f(dst: &mut [u8], out: &mut u32, n: usize), and the reborrows
//         each attempt starts with: `let mut dst = &mut *dst; let out = &mut *out;`
//
// Each attempt gets references of its own: the body may re-point them
// (`dst = &mut dst[..n]`) without the next attempt seeing it, and writes
// through them are the attempt's (no false `unused_assignments`). The
// parameter's `mut` moves to the reborrow, so `unused_mut` fires, or not, as
// without `#[retry]`. The signature's type is unchanged.
//
// A parameter with a named lifetime (`headers: &'h mut [u8]`, which the
// body may store in `self`), or one the result may borrow from, is left
// alone: a reborrow per attempt could not outlive the attempt.
pub(super) fn reborrowed(sig: &mut Signature, moves_arguments: bool) -> Vec<Reborrow> {
    let lifetimes: Vec<_> = sig
        .inputs
        .iter()
        .map(|input| match input {
            syn::FnArg::Typed(typed) => match &*typed.ty {
                // A named lifetime may be stored beyond the attempt (in
                // `self`, in another argument): only an elided one is
                // certainly the attempt's to shorten.
                Type::Reference(r) => match &r.lifetime {
                    Some(l) if l.ident != "_" => true,
                    _ => valid::output_may_borrow(sig, None),
                },
                _ => true,
            },
            syn::FnArg::Receiver(_) => true,
        })
        .collect();
    let mut reborrows = Vec::new();
    for (input, borrowed) in sig.inputs.iter_mut().zip(lifetimes) {
        if borrowed {
            continue;
        }
        let syn::FnArg::Typed(typed) = input else {
            continue;
        };
        let Type::Reference(TypeReference {
            mutability: Some(_),
            ..
        }) = &*typed.ty
        else {
            continue;
        };
        let Pat::Ident(binding) = &mut *typed.pat else {
            continue;
        };
        if binding.by_ref.is_some() || binding.subpat.is_some() {
            continue;
        }
        // `&mut Vec<T>`, `&mut String`, `&mut PathBuf` that the body does
        // not re-point nor move: a reborrow would hide `clippy::ptr_arg`
        // (which reads the parameter's uses), and is not needed.
        if binding.mutability.is_none() && !moves_arguments && ptr_arg_type(&typed.ty) {
            continue;
        }
        reborrows.push(Reborrow {
            mutability: binding.mutability.take(),
            name: binding.ident.clone(),
        });
    }
    reborrows
}

/// Whether `ty` is `&mut` of a type `clippy::ptr_arg` would rather see as
/// a slice or `str`: `Vec<T>`, `String`, `PathBuf`.
fn ptr_arg_type(ty: &Type) -> bool {
    let Type::Reference(r) = ty else {
        return false;
    };
    let Type::Path(path) = &*r.elem else {
        return false;
    };
    path.path
        .segments
        .last()
        .is_some_and(|s| s.ident == "Vec" || s.ident == "String" || s.ident == "PathBuf")
}

// Input:  #[retry(clone(v, self))] fn f(mut self, mut v: Vec<u8>)
// Output: fn f(self, v: Vec<u8>), and the names whose clones are `mut`:
//         each attempt's `let mut v = v.clone();` (the `mut` moves, so
//         `unused_mut` fires, or not, as without `#[retry]`).
pub(super) fn cloned_mutability(args: &RetryArgs, sig: &mut Signature) -> Vec<Ident> {
    let Some(clone) = &args.clone else {
        return Vec::new();
    };
    let mut names = Vec::new();
    for input in &mut sig.inputs {
        match input {
            syn::FnArg::Receiver(r) => {
                if clone.value.iter().any(|n| n == "self")
                    && matches!(r.kind, syn::ReceiverKind::Value)
                    && r.mutability.take().is_some()
                {
                    names.push(Ident::new("self", r.self_token.span));
                }
            }
            syn::FnArg::Typed(typed) => {
                if let Pat::Ident(binding) = &mut *typed.pat
                    && binding.by_ref.is_none()
                    && clone.value.contains(&binding.ident)
                    && binding.mutability.take().is_some()
                {
                    names.push(binding.ident.clone());
                }
            }
        }
    }
    names
}

/// `ty` with each `impl Trait` replaced by `_`: the type the body is given
/// inside the function, where `impl Trait` cannot be written and the
/// compiler infers the hidden type from the body.
pub(super) fn inferred(ty: &Type) -> Type {
    let mut ty = ty.clone();
    infer_impl_trait(&mut ty);
    ty
}

// A named lifetime (not `'static`) is written `'_` inside the function:
// named there, clippy would take it as used in the body and stop
// reporting `needless_lifetimes` on the signature.
fn anonymous(lifetime: &mut syn::Lifetime) {
    if lifetime.ident != "static" {
        lifetime.ident = syn::Ident::new("_", lifetime.ident.span());
    }
}

fn infer_impl_trait(ty: &mut Type) {
    match ty {
        Type::ImplTrait(t) => {
            *ty = Type::Infer(syn::TypeInfer {
                attrs: Vec::new(),
                underscore_token: syn::token::Underscore(t.impl_token.span),
            });
        }
        Type::Path(path) => {
            if let Some(qself) = &mut path.qself {
                infer_impl_trait(&mut qself.ty);
            }
            for segment in &mut path.path.segments {
                if let syn::PathArguments::AngleBracketed(args) = &mut segment.arguments {
                    for arg in &mut args.args {
                        match arg {
                            syn::GenericArgument::Type(t) => infer_impl_trait(t),
                            syn::GenericArgument::AssocType(a) => infer_impl_trait(&mut a.ty),
                            syn::GenericArgument::Lifetime(l) => anonymous(l),
                            _ => {}
                        }
                    }
                }
            }
        }
        Type::Reference(r) => {
            if let Some(l) = &mut r.lifetime {
                anonymous(l);
            }
            infer_impl_trait(&mut r.elem);
        }
        Type::Ptr(p) => infer_impl_trait(&mut p.elem),
        Type::Slice(s) => infer_impl_trait(&mut s.elem),
        Type::Array(a) => infer_impl_trait(&mut a.elem),
        Type::Paren(p) => infer_impl_trait(&mut p.elem),
        Type::Group(g) => infer_impl_trait(&mut g.elem),
        Type::Tuple(t) => t.elems.iter_mut().for_each(infer_impl_trait),
        _ => {}
    }
}

// Input:  a body, for `clone(self)`.
// Output: the body with each `self` (not a path's `self::`) renamed to the
//         attempt's clone, `__backoff_self`, since `self` cannot be shadowed.
//         Items nested in the body (`impl`, `trait`, `mod`, a named `fn`)
//         have a `self` of their own and are kept as written.
pub(super) fn rename_self(body: TokenStream) -> TokenStream {
    let mut out = Vec::new();
    let mut tokens = body.into_iter().peekable();
    while let Some(token) = tokens.next() {
        let starts_item = match &token {
            TokenTree::Ident(ident) => {
                ident == "impl"
                    || ident == "trait"
                    || ident == "mod"
                    || (ident == "fn" && matches!(tokens.peek(), Some(TokenTree::Ident(_))))
            }
            _ => false,
        };
        if starts_item {
            // Verbatim up to and including the item's braced body.
            out.push(token);
            for token in tokens.by_ref() {
                let body =
                    matches!(&token, TokenTree::Group(g) if g.delimiter() == Delimiter::Brace);
                out.push(token);
                if body {
                    break;
                }
            }
            continue;
        }
        match token {
            TokenTree::Ident(ident) if ident == "self" => {
                let is_path = matches!(tokens.peek(), Some(TokenTree::Punct(p)) if p.as_char() == ':' && p.spacing() == proc_macro2::Spacing::Joint);
                if is_path {
                    out.push(TokenTree::Ident(ident));
                } else {
                    out.push(TokenTree::Ident(Ident::new("__backoff_self", ident.span())));
                }
            }
            TokenTree::Group(group) => {
                let mut renamed = Group::new(group.delimiter(), rename_self(group.stream()));
                renamed.set_span(group.span());
                out.push(TokenTree::Group(renamed));
            }
            other => out.push(other),
        }
    }
    out.into_iter().collect()
}
