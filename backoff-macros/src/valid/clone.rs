//! `clone(..)`: each name a by-value parameter bound by name.

use syn::visit::Visit;
use syn::{Pat, Signature, Type};

use crate::errors::Errors;

use super::shape::{IdentFinder, receiver_borrow, ungrouped_pat, ungrouped_type};

/// `clone(a, b)`: each name must be a by-value parameter, bound by name.
pub(super) fn check_clone(sig: &Signature, names: &[syn::Ident], errors: &mut Errors) {
    for name in names {
        if name == "self" {
            match sig.receiver() {
                None => errors.push(syn::Error::new(
                    name.span(),
                    format!("`{}` has no `self` parameter to clone", sig.ident),
                )),
                Some(r) if receiver_borrow(r).is_some_and(|(_, mutable)| mutable) => {
                    errors.push(syn::Error::new(
                        name.span(),
                        "`self` is a `&mut` reference here, which is not cloned: remove it from `clone(..)`; if the body gives `self` away (`Parser::new(self)`), give each attempt a reborrow instead, writing `&mut *self` there",
                    ));
                }
                Some(r) if receiver_borrow(r).is_some() => {
                    errors.push(syn::Error::new(
                        name.span(),
                        "`self` is a reference here: every attempt can use it already; remove it from `clone(..)`",
                    ));
                }
                Some(_) => {}
            }
            continue;
        }
        let mut in_pattern = false;
        let mut found = None;
        for input in &sig.inputs {
            let syn::FnArg::Typed(t) = input else {
                continue;
            };
            match ungrouped_pat(&t.pat) {
                Pat::Ident(p) if p.ident == *name && p.subpat.is_none() => {
                    found = Some((p, &*t.ty));
                }
                pat => {
                    let mut finder = IdentFinder { name, found: false };
                    finder.visit_pat(pat);
                    in_pattern |= finder.found;
                }
            }
        }
        match found {
            Some((p, _)) if p.by_ref.is_some() => errors.push(syn::Error::new(
                name.span(),
                format!("`{name}` is bound by `ref`: every attempt can use it already; remove it from `clone(..)`"),
            )),
            Some((_, ty)) if matches!(ungrouped_type(ty), Type::Reference(_)) => {
                errors.push(syn::Error::new(
                    name.span(),
                    format!("`{name}` is a reference: every attempt can use it already; remove it from `clone(..)`"),
                ));
            }
            Some(_) => {}
            None if in_pattern => errors.push(syn::Error::new(
                name.span(),
                format!("`{name}` is bound inside a pattern; `clone(..)` takes parameters bound by name, as in `{name}: T`"),
            )),
            None => {
                let by_value: Vec<String> = sig
                    .inputs
                    .iter()
                    .filter_map(|input| match input {
                        syn::FnArg::Typed(t) => match (ungrouped_pat(&t.pat), ungrouped_type(&t.ty)) {
                            (_, Type::Reference(_)) => None,
                            (Pat::Ident(p), _) => Some(p.ident.to_string()),
                            _ => None,
                        },
                        syn::FnArg::Receiver(r) => {
                            receiver_borrow(r).is_none().then(|| "self".to_owned())
                        }
                    })
                    .collect();
                let known: Vec<&str> = by_value.iter().map(String::as_str).collect();
                let hint = match crate::errors::closest(&name.to_string(), &known) {
                    Some(close) => format!("; did you mean `{close}`?"),
                    None if known.is_empty() => "; it has no by-value parameter".to_owned(),
                    None => format!(
                        "; its by-value parameters are {}",
                        known.iter().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", ")
                    ),
                };
                errors.push(syn::Error::new(
                    name.span(),
                    format!("`{name}` is not a parameter of `{}`{hint}", sig.ident),
                ));
            }
        }
    }
}
