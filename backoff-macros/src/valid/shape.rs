//! Reading the signature's syntax, shared by the checks of `valid`: a
//! `self` that is a reference, a pattern or type without its parentheses,
//! the `Ok` type, a binding in a pattern. A leaf: it names no other check.

use syn::visit::Visit;
use syn::{Pat, ReturnType, Type};

/// Finds a binding named `name` in a pattern.
pub(super) struct IdentFinder<'a> {
    pub(super) name: &'a syn::Ident,
    pub(super) found: bool,
}

impl<'ast> Visit<'ast> for IdentFinder<'_> {
    fn visit_pat_ident(&mut self, node: &'ast syn::PatIdent) {
        self.found |= node.ident == *self.name;
        syn::visit::visit_pat_ident(self, node);
    }
}

/// The `Ok` type of a return type written `Result<T, ..>` (or an alias
/// such as `io::Result<T>`).
pub(super) fn ok_type(output: &ReturnType) -> Option<&Type> {
    result_arguments(output)?.next()
}

/// The types a return type written `Result<..>` is given (`T` and `E`, or
/// `T` of an alias such as `io::Result<T>`).
pub(super) fn result_arguments(output: &ReturnType) -> Option<impl Iterator<Item = &Type>> {
    let ReturnType::Type(_, ty) = output else {
        return None;
    };
    let Type::Path(path) = ungrouped_type(ty) else {
        return None;
    };
    let (name, types) = last_with_types(&path.path)?;
    (name == "Result").then(|| types.into_iter())
}

/// The last segment of a path, with the types between its `<..>`.
pub(super) fn last_with_types(path: &syn::Path) -> Option<(&syn::Ident, Vec<&Type>)> {
    let last = path.segments.last()?;
    let types = match &last.arguments {
        syn::PathArguments::AngleBracketed(generics) => generics
            .args
            .iter()
            .filter_map(|a| match a {
                syn::GenericArgument::Type(t) => Some(t),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    };
    Some((&last.ident, types))
}

/// A `self` that is a reference (`&self`, `&'a mut self`, `self: &Self`):
/// its lifetime, and whether it is `mut`.
pub(super) fn receiver_borrow(r: &syn::Receiver) -> Option<(Option<&syn::Lifetime>, bool)> {
    match &r.kind {
        syn::ReceiverKind::Reference(_, lifetime, mutability) => {
            Some((lifetime.as_ref(), mutability.is_some()))
        }
        syn::ReceiverKind::Typed(_, ty) => match ungrouped_type(ty) {
            Type::Reference(t) => Some((t.lifetime.as_ref(), t.mutability.is_some())),
            _ => None,
        },
        _ => None,
    }
}

/// A pattern without its parentheses.
pub(super) fn ungrouped_pat(pat: &Pat) -> &Pat {
    match pat {
        Pat::Paren(p) => ungrouped_pat(&p.pat),
        _ => pat,
    }
}

/// A type without its parentheses and invisible groups.
pub(super) fn ungrouped_type(ty: &Type) -> &Type {
    match ty {
        Type::Group(g) => ungrouped_type(&g.elem),
        Type::Paren(p) => ungrouped_type(&p.elem),
        other => other,
    }
}

/// Whether `ty` has a `_` or an `impl Trait`, which the function's body
/// cannot name.
pub(super) fn unnameable(ty: &Type) -> bool {
    struct Finder(bool);
    impl<'ast> Visit<'ast> for Finder {
        fn visit_type_infer(&mut self, _: &'ast syn::TypeInfer) {
            self.0 = true;
        }
        fn visit_type_impl_trait(&mut self, _: &'ast syn::TypeImplTrait) {
            self.0 = true;
        }
    }
    let mut finder = Finder(false);
    finder.visit_type(ty);
    finder.0
}

/// The primitive types that are `Copy`, by name.
pub(super) const COPY_PRIMITIVES: [&str; 16] = [
    "u8", "u16", "u32", "u64", "u128", "usize", "i8", "i16", "i32", "i64", "i128", "isize", "f32",
    "f64", "bool", "char",
];
