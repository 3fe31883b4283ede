//! A function whose `Ok` value holds a unique borrow of a `&mut` it was
//! given (`fn get(&mut self) -> Result<&mut T, E>`, `fn first(buf: &mut
//! Vec<u8>) -> Result<&mut u8, E>`, `-> Result<IterMut<'_, T>, E>`): its
//! attempts are one `FnMut` closure (an `async fn`'s, one that makes each
//! attempt's future), which can never hand out a unique borrow of what it
//! captured. Refused before rustc, which would say "captured variable
//! cannot escape `FnMut` closure body" (an `async fn`: E0524, "two
//! closures require unique access to `*self` at the same time"; in an
//! edition-2018 crate, an E0373 whose `move` fix does not apply).
//!
//! A unique borrow is a `&mut`, a type whose name says it holds one
//! (`IterMut<'_, T>`, `AsyncFdReadyMutGuard<'a, T>`, `MutexGuard<'_, T>`),
//! or any type with the `&mut`'s lifetime when the body hands the `&mut`
//! itself to something (`Ok(Field { multipart: self })`,
//! `Ok(Compiler { builder, state })`).
//!
//! A shared borrow (`-> Result<&str, E>`) is left to rustc: it compiles
//! when the body borrows distinct fields.

use syn::visit::Visit;
use syn::{FnArg, Pat, Signature, Type};

use crate::errors::Errors;

use super::shape::{ok_type, receiver_borrow, ungrouped_pat, ungrouped_type};

/// Types of `std` that hold a unique borrow (besides the `..Mut` ones):
/// returned with a lifetime from a `&mut`, they are one.
const UNIQUE_HOLDERS: &[&str] = &[
    "MutexGuard",
    "RwLockWriteGuard",
    "Entry",
    "OccupiedEntry",
    "VacantEntry",
    "Drain",
    "PeekMut",
];

/// The unique borrows in a type: `&mut` references, and types that hold
/// one (`IterMut<'_, T>`, `RefMut<'_, T>`, `PathSegmentsMut<'_>`), each
/// with its lifetime (`None` when elided) and span.
#[derive(Default)]
struct Unique {
    all: Vec<(Option<String>, proc_macro2::Span)>,
    /// Every type with a lifetime holds one (the body hands a `&mut` over).
    any_holder: bool,
}

/// Whether a type's name has the word `Mut` (`IterMut`,
/// `AsyncFdReadyMutGuard`; not `Mutex`).
fn says_mut(name: &str) -> bool {
    name.match_indices("Mut")
        .any(|(i, _)| !name[i + 3..].starts_with(|c: char| c.is_ascii_lowercase()))
}

impl<'ast> Visit<'ast> for Unique {
    fn visit_type_reference(&mut self, node: &'ast syn::TypeReference) {
        if let Some(m) = node.mutability {
            let lifetime = node.lifetime.as_ref().map(|l| l.ident.to_string());
            let lifetime = lifetime.filter(|l| l != "_");
            self.all.push((lifetime, m.span));
        }
        syn::visit::visit_type_reference(self, node);
    }

    fn visit_type_path(&mut self, node: &'ast syn::TypePath) {
        if let Some(last) = node.path.segments.last() {
            let name = last.ident.to_string();
            let holder = says_mut(&name) || UNIQUE_HOLDERS.contains(&name.as_str());
            if holder || self.any_holder {
                let lifetimes: Vec<String> = match &last.arguments {
                    syn::PathArguments::AngleBracketed(a) => a
                        .args
                        .iter()
                        .filter_map(|a| match a {
                            syn::GenericArgument::Lifetime(l) => Some(l.ident.to_string()),
                            _ => None,
                        })
                        .collect(),
                    _ => Vec::new(),
                };
                // Only with a lifetime written (`'_` or named): without
                // one, the type may well be owned (a log's `Entry`).
                for lifetime in lifetimes.into_iter().filter(|l| l != "static") {
                    let lifetime = Some(lifetime).filter(|l| l != "_");
                    self.all.push((lifetime, last.ident.span()));
                }
            }
        }
        syn::visit::visit_type_path(self, node);
    }

    // `impl Fn(&mut T) -> &mut U` and `dyn Fn(..)` bind their own lifetimes.
    fn visit_parenthesized_generic_arguments(
        &mut self,
        _: &'ast syn::ParenthesizedGenericArguments,
    ) {
    }

    fn visit_type_fn_ptr(&mut self, _: &'ast syn::TypeFnPtr) {}
}

const WAYS_OUT: &str = "return owned data, or split the function: retry the fallible work in one function and take the borrow in a second one, without `#[retry]`";

/// The unique borrows of the `Ok` type, by the `&mut` they come from.
pub(super) fn check_unique_borrows(sig: &Signature, is_async: bool, errors: &mut Errors) {
    refuse_unique_borrows(sig, is_async, None, errors);
}

/// Beside a body that hands a `&mut` it was given to something (a field,
/// an argument, the value returned): any type of the `Ok` value with that
/// `&mut`'s lifetime holds it.
pub(crate) fn check_borrows_handed_over(
    sig: &Signature,
    block: &syn::Block,
    is_async: bool,
    errors: &mut Errors,
) {
    let mut mutable: Vec<String> = Vec::new();
    for input in &sig.inputs {
        match input {
            FnArg::Receiver(r) if matches!(receiver_borrow(r), Some((_, true))) => {
                mutable.push("self".to_owned());
            }
            FnArg::Typed(t) => {
                if let (Type::Reference(r), Pat::Ident(p)) =
                    (ungrouped_type(&t.ty), ungrouped_pat(&t.pat))
                    && r.mutability.is_some()
                {
                    mutable.push(p.ident.to_string());
                }
            }
            FnArg::Receiver(_) => {}
        }
    }
    let Some(ok) = ok_type(&sig.output) else {
        return;
    };
    if mutable.is_empty() {
        return;
    }
    // (Only where the `Ok` type has a lifetime a unique borrow could take
    // and the name rule has not refused it already.)
    let mut named = Unique::default();
    named.visit_type(ok);
    let mut any = Unique {
        any_holder: true,
        ..Unique::default()
    };
    any.visit_type(ok);
    if named.all.is_empty() && !any.all.is_empty() {
        let handed = super::moves::handed_over(block, &mutable);
        if !handed.is_empty() {
            refuse_unique_borrows(sig, is_async, Some(&handed), errors);
        }
    }
}

/// `handed`: the `&mut`s the body hands over, whose lifetime any type
/// holds (`None`: the types that say they hold one, of any `&mut`).
fn refuse_unique_borrows(
    sig: &Signature,
    is_async: bool,
    handed: Option<&[String]>,
    errors: &mut Errors,
) {
    let Some(ok) = ok_type(&sig.output) else {
        return;
    };
    let eligible = |name: &str| handed.is_none_or(|h| h.iter().any(|n| n == name));
    let mut found = Unique {
        any_holder: handed.is_some(),
        ..Unique::default()
    };
    found.visit_type(ok);
    if found.all.is_empty() {
        return;
    }
    let kind = if is_async {
        "an `async fn`"
    } else {
        "a plain fn"
    };
    let rustc = if is_async {
        "rustc: \"two closures require unique access\""
    } else {
        "rustc: \"captured variable cannot escape `FnMut` closure body\""
    };
    let self_borrow = sig.receiver().and_then(receiver_borrow);
    if let Some((lifetime, true)) = self_borrow.filter(|_| eligible("self")) {
        let lifetime = lifetime.map(|l| l.ident.to_string());
        if let Some((_, span)) = found
            .all
            .iter()
            .find(|(l, _)| l.is_none() || *l == lifetime)
        {
            errors.push(syn::Error::new(
                *span,
                format!("`#[retry]` cannot return a unique borrow of `self` from {kind} that takes `&mut self`: each attempt borrows `self` again, and a unique borrow handed out by one attempt would still hold it ({rustc}); {WAYS_OUT}"),
            ));
            return;
        }
    }
    for input in &sig.inputs {
        let FnArg::Typed(t) = input else { continue };
        let Type::Reference(r) = ungrouped_type(&t.ty) else {
            continue;
        };
        let handed_over = match ungrouped_pat(&t.pat) {
            Pat::Ident(p) => eligible(&p.ident.to_string()),
            _ => handed.is_none(),
        };
        if r.mutability.is_none() || !handed_over {
            continue;
        }
        let lifetime = r.lifetime.as_ref().map(|l| l.ident.to_string());
        let borrowed = found.all.iter().find(|(l, _)| match (l, &lifetime) {
            // Elided in the output: from this parameter when `self` is not a
            // reference to take it from.
            (None, _) => self_borrow.is_none(),
            (Some(out), Some(param)) => out == param,
            (Some(_), None) => false,
        });
        if let Some((_, span)) = borrowed {
            let name = match ungrouped_pat(&t.pat) {
                Pat::Ident(p) => format!("`{}`", p.ident),
                _ => "this `&mut` parameter".to_owned(),
            };
            errors.push(syn::Error::new(
                *span,
                format!("`#[retry]` cannot return a unique borrow of {name} from {kind}: each attempt reborrows {name}, and a unique borrow handed out by one attempt would still hold it ({rustc}); {WAYS_OUT}"),
            ));
            return;
        }
    }
}
