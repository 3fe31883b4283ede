//! A generic error type `E` without the `From` bounds that `circuit`,
//! `throttle` and the timeouts need: one error on `E`, naming the bounds to
//! add (rustc alone would suggest bounding `E` by a hidden check trait).

use syn::{GenericParam, Ident, Signature, Type, TypeParamBound, WherePredicate};

use crate::attr::RetryArgs;
use crate::errors::Errors;

/// Traits of `std` a bound may name that never imply a `From` of the
/// library's refusals: with only these (or none), a missing `From` bound
/// is certain. A bound by any other trait (the user's own may have
/// `From<CircuitOpen>` as a supertrait) leaves the check to the compiler.
const NEUTRAL: &str = "Debug Display Error Send Sync Clone Copy Sized Unpin PartialEq Eq Hash PartialOrd Ord Default Any";

pub(super) fn check_generic_error(
    sig: &Signature,
    is_async: bool,
    args: &RetryArgs,
    errors: &mut Errors,
) {
    let Some(param) = generic_error(sig) else {
        return;
    };
    let mut needs: Vec<(&str, &str)> = Vec::new();
    if args.circuit.is_some() {
        needs.push(("circuit", "CircuitOpen"));
    }
    if args.throttle.is_some() {
        needs.push(("throttle", "Rejected"));
    }
    if args.cancel.is_some() {
        needs.push(("cancel", "Cancelled"));
    }
    let timeouts = [
        ("timeout", &args.timeout),
        ("attempt_timeout", &args.attempt_timeout),
    ];
    if is_async && let Some((name, _)) = timeouts.into_iter().find(|(_, t)| t.is_some()) {
        needs.push((name, "Elapsed"));
    }
    let bounds = bounds_of(sig, param);
    if bounds.iter().any(|b| !is_neutral_or_from(b)) {
        return;
    }
    let missing: Vec<_> = needs
        .into_iter()
        .filter(|(_, refusal)| !bounds.iter().any(|b| is_from(b, refusal)))
        .collect();
    if missing.is_empty() {
        return;
    }
    let arguments = missing
        .iter()
        .map(|(arg, _)| format!("`{arg}`"))
        .collect::<Vec<_>>()
        .join(" and ");
    let wanted = missing
        .iter()
        .map(|(_, refusal)| format!("From<backoff_runtime::{refusal}>"))
        .collect::<Vec<_>>()
        .join(" + ");
    errors.push(syn::Error::new(
        param.span(),
        format!(
            "with {arguments}, the error type `{param}` must implement `{wanted}`: the call fails fast with `{param}::from(..)` of the refusal; add the bound `{param}: {wanted}`"
        ),
    ));
}

/// The `E` of `-> Result<T, E>` when `E` is a type parameter of the
/// function.
pub(crate) fn generic_error(sig: &Signature) -> Option<&Ident> {
    let (_, error) = super::closures::result_types(&sig.output)?;
    let Type::Path(error) = super::shape::ungrouped_type(error) else {
        return None;
    };
    let ident = error.path.get_ident()?;
    sig.generics.params.iter().find_map(|p| match p {
        GenericParam::Type(t) if t.ident == *ident => Some(&t.ident),
        _ => None,
    })
}

/// Every bound on `param`, in its declaration and the `where` clause.
fn bounds_of<'a>(sig: &'a Signature, param: &Ident) -> Vec<&'a TypeParamBound> {
    let mut bounds = Vec::new();
    for p in &sig.generics.params {
        if let GenericParam::Type(t) = p
            && t.ident == *param
        {
            bounds.extend(t.bounds.iter());
        }
    }
    if let Some(clause) = &sig.generics.where_clause {
        for predicate in &clause.predicates {
            if let WherePredicate::Type(t) = predicate
                && let Type::Path(p) = &t.bounded_ty
                && p.path.is_ident(param)
            {
                bounds.extend(t.bounds.iter());
            }
        }
    }
    bounds
}

fn is_neutral_or_from(bound: &TypeParamBound) -> bool {
    match bound {
        TypeParamBound::Trait(t) => t
            .path
            .segments
            .last()
            .is_some_and(|s| s.ident == "From" || NEUTRAL.split(' ').any(|n| s.ident == n)),
        TypeParamBound::Lifetime(_) => true,
        _ => false,
    }
}

/// Whether `bound` is `From<..::refusal>`.
fn is_from(bound: &TypeParamBound, refusal: &str) -> bool {
    let TypeParamBound::Trait(t) = bound else {
        return false;
    };
    super::shape::last_with_types(&t.path).is_some_and(|(name, types)| {
        name == "From"
            && types.iter().any(|t| {
                matches!(t, Type::Path(p) if p.path.segments.last().is_some_and(|s| s.ident == refusal))
            })
    })
}
