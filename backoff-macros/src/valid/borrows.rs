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
//! A shared borrow (`-> Result<&str, E>`) compiles when the body borrows
//! distinct fields; it is refused when the body certainly takes the `&mut`
//! whole and uniquely (`&mut *self`, `buf[i] = ..`, `buf.iter_mut()`,
//! `self.buffer()` beside `self.kind = ..`), and otherwise left to rustc.

use syn::visit::Visit;
use syn::{Expr, FnArg, Pat, Signature, Type};

use crate::errors::Errors;

use super::shape::{ok_type, receiver_borrow, ungrouped_pat, ungrouped_type};

/// Types of `std` that hold a unique borrow (besides the `..Mut` ones):
/// returned with a lifetime from a `&mut`, they are one.
const UNIQUE_HOLDERS: &str =
    "MutexGuard RwLockWriteGuard Entry OccupiedEntry VacantEntry Drain PeekMut";

/// The unique borrows in a type: `&mut` references, and types that hold
/// one (`IterMut<'_, T>`, `RefMut<'_, T>`, `PathSegmentsMut<'_>`), each
/// with its lifetime (`None` when elided) and span.
#[derive(Default)]
pub(super) struct Unique {
    pub(super) all: Vec<(Option<String>, proc_macro2::Span)>,
    /// Every type with a lifetime holds one (the body hands a `&mut` over).
    pub(super) any_holder: bool,
    /// Shared references too (the body uses the `&mut` mutably).
    pub(super) shared: bool,
    /// And every lifetime, anywhere (what the return type may borrow).
    pub(super) every_lifetime: bool,
}

/// Whether a type's name has the word `Mut` (`IterMut`,
/// `AsyncFdReadyMutGuard`; not `Mutex`).
fn says_mut(name: &str) -> bool {
    name.match_indices("Mut")
        .any(|(i, _)| !name[i + 3..].starts_with(|c: char| c.is_ascii_lowercase()))
}

impl<'ast> Visit<'ast> for Unique {
    fn visit_type_reference(&mut self, node: &'ast syn::TypeReference) {
        if node.mutability.is_some() || self.shared {
            let lifetime = node.lifetime.as_ref().map(|l| l.ident.to_string());
            let lifetime = lifetime.filter(|l| l != "_");
            let span = node.mutability.map_or(node.and_token.span, |m| m.span);
            self.all.push((lifetime, span));
        }
        syn::visit::visit_type_reference(self, node);
    }

    fn visit_type_path(&mut self, node: &'ast syn::TypePath) {
        if let Some(last) = node.path.segments.last() {
            let name = last.ident.to_string();
            let holder = says_mut(&name) || UNIQUE_HOLDERS.split(' ').any(|h| h == name);
            // Only with a lifetime written (`'_` or named): without one,
            // the type may well be owned (a log's `Entry`).
            if let syn::PathArguments::AngleBracketed(a) = &last.arguments
                && (holder || self.any_holder)
            {
                for a in &a.args {
                    if let syn::GenericArgument::Lifetime(l) = a
                        && l.ident != "static"
                    {
                        let lifetime = Some(l.ident.to_string()).filter(|l| l != "_");
                        self.all.push((lifetime, last.ident.span()));
                    }
                }
            }
        }
        syn::visit::visit_type_path(self, node);
    }

    fn visit_lifetime(&mut self, node: &'ast syn::Lifetime) {
        let name = node.ident.to_string();
        if self.every_lifetime && name != "static" {
            self.all
                .push(((name != "_").then_some(name), node.apostrophe));
        }
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

/// For a shared borrow: the body may also touch only what it does not
/// return.
const WAYS_OUT_SHARED: &str = "return owned data; in the body, mutate only fields the value returned does not borrow (`self.pos += 1`, not a method of `self`); or split the function: retry the fallible work in one function and take the borrow in a second one, without `#[retry]`";

/// The unique borrows of the `Ok` type, by the `&mut` they come from.
pub(super) fn check_unique_borrows(sig: &Signature, is_async: bool, errors: &mut Errors) {
    let _ = refuse_unique_borrows(sig, is_async, How::Named, errors);
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
    // The `&mut`s given: `self`, and the parameters bound by name.
    let mutable: Vec<String> = sig
        .inputs
        .iter()
        .filter_map(|input| match input {
            FnArg::Receiver(r) => {
                matches!(receiver_borrow(r), Some((_, true))).then(|| "self".into())
            }
            FnArg::Typed(t) => match (ungrouped_type(&t.ty), ungrouped_pat(&t.pat)) {
                (Type::Reference(r), Pat::Ident(p)) if r.mutability.is_some() => {
                    Some(p.ident.to_string())
                }
                _ => None,
            },
        })
        .collect();
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
        shared: true,
        ..Unique::default()
    };
    any.visit_type(ok);
    if !named.all.is_empty() || any.all.is_empty() {
        return;
    }
    let handed = super::moves::handed_over(block, &mutable);
    if !handed.is_empty() && refuse_unique_borrows(sig, is_async, How::Handed(&handed), errors) {
        return;
    }
    // A shared borrow, beside a body that takes the `&mut` whole.
    let mut used = Mutates {
        names: &mutable,
        found: Vec::new(),
        methods: Vec::new(),
        fields: false,
    };
    // (The body as tokens, parsed here: see `moves`.)
    if let Ok(block) = syn::parse2::<syn::Block>(quote::ToTokens::to_token_stream(block)) {
        used.visit_block(&block);
    }
    if used.fields {
        // (A method of `self` beside a field it mutates: the attempts
        // capture all of `*self` uniquely.)
        used.found.append(&mut used.methods);
    }
    // (A named lifetime another parameter has too may be what the `Ok`
    // value borrows.)
    used.found.retain(|(name, _)| !lifetime_shared(sig, name));
    if !used.found.is_empty() {
        let _ = refuse_unique_borrows(sig, is_async, How::Mutated(&used.found), errors);
    }
}

/// Whether the named lifetime of the `&mut` parameter `name` (or `self`)
/// appears in another parameter's type.
fn lifetime_shared(sig: &Signature, name: &str) -> bool {
    let own = |input: &FnArg| match input {
        FnArg::Receiver(_) => name == "self",
        FnArg::Typed(t) => matches!(ungrouped_pat(&t.pat), Pat::Ident(p) if p.ident == name),
    };
    let lifetimes = |input: &FnArg| {
        let tokens = quote::ToTokens::to_token_stream(input).to_string();
        let words = tokens.split_whitespace().filter(|w| w.starts_with('\''));
        words.map(str::to_owned).collect::<Vec<_>>()
    };
    let Some(lifetime) = sig.inputs.iter().find(|i| own(i)).map(lifetimes) else {
        return false;
    };
    lifetime.first().is_some_and(|l| {
        sig.inputs
            .iter()
            .any(|i| !own(i) && lifetimes(i).contains(l))
    })
}

/// Why a borrow in the `Ok` type holds a `&mut` uniquely.
#[derive(Clone, Copy)]
enum How<'a> {
    /// Its type says so (`&mut T`, `IterMut<'_, T>`).
    Named,
    /// The body hands these `&mut`s over: any type of their lifetime.
    Handed(&'a [String]),
    /// The body uses these `&mut`s mutably (each with the use, as in
    /// `self.advance()`): any borrow of their lifetime, shared too.
    Mutated(&'a [(String, String)]),
}

/// Methods of `std` that take `&mut self` (besides the `.._mut` ones).
const MUTATORS: &str = "push push_str insert clear extend extend_from_slice truncate remove drain pop sort sort_unstable reverse fill swap copy_from_slice append retain resize write write_all read read_exact read_to_end read_to_string";

/// The uses of `names` (the `&mut`s given) that take one whole and
/// uniquely: `&mut *x`, `&mut x[..]`, `*x = ..`, `x[i] = ..`, a mutator
/// (`x.push(..)`, `x.iter_mut()`); and, kept apart, any method called on
/// one (`self.advance()`, which may take `&self`), with whether a field is
/// mutated (`self.pos += 1`, `&mut self.buf`).
struct Mutates<'a> {
    names: &'a [String],
    found: Vec<(String, String)>,
    methods: Vec<(String, String)>,
    fields: bool,
}

impl Mutates<'_> {
    /// The name `expr` is (`x`, `(x)`, `*x`), if one of `names`.
    fn named(&self, expr: &Expr) -> Option<String> {
        match expr {
            Expr::Paren(p) => self.named(&p.expr),
            Expr::Unary(u) if matches!(u.op, syn::UnOp::Deref(_)) => self.named(&u.expr),
            Expr::Path(p) => p
                .path
                .get_ident()
                .map(ToString::to_string)
                .filter(|n| self.names.contains(n)),
            _ => None,
        }
    }

    /// A place written through: `*x`, `x[i]` (a use of `x` whole) or
    /// `x.field` (of a field).
    fn written(&mut self, place: &Expr, what: &str) {
        match place {
            Expr::Index(i) => self.written(&i.expr, what),
            Expr::Field(f) if self.named(&f.base).is_some() => self.fields = true,
            Expr::Field(f) => self.written(&f.base, what),
            _ => {
                if let Some(name) = self.named(place) {
                    let what = what.replace("NAME", &name);
                    self.found.push((name, what));
                }
            }
        }
    }
}

impl<'ast> Visit<'ast> for Mutates<'_> {
    fn visit_expr(&mut self, e: &'ast Expr) {
        match e {
            Expr::Reference(r) if r.mutability.is_some() => {
                self.written(&r.expr, "a `&mut` of `NAME`");
            }
            Expr::Assign(a) => self.written(&a.left, "an assignment through `NAME`"),
            // (`+=`, `|=`, ..: an operator ending in `=` but a comparison.)
            Expr::Binary(b)
                if quote::ToTokens::to_token_stream(&b.op)
                    .to_string()
                    .strip_suffix('=')
                    .is_some_and(|op| !matches!(op, "" | "=" | "!" | "<" | ">")) =>
            {
                self.written(&b.left, "an assignment through `NAME`");
            }
            Expr::MethodCall(m) => {
                let method = m.method.to_string();
                let what = format!("`NAME.{method}(..)`");
                if method.ends_with("_mut") || MUTATORS.split(' ').any(|m| m == method) {
                    self.written(&m.receiver, &what);
                } else if let Some(name) = self.named(&m.receiver) {
                    self.methods
                        .push((name.clone(), what.replace("NAME", &name)));
                }
            }
            _ => {}
        }
        syn::visit::visit_expr(self, e);
    }

    // Items and closures' own parameters are left as `moves` leaves them.
    fn visit_item(&mut self, _: &'ast syn::Item) {}
}

/// `how`: which `&mut`s, and which borrows of the `Ok` type hold them.
/// Whether it refused.
fn refuse_unique_borrows(
    sig: &Signature,
    is_async: bool,
    how: How<'_>,
    errors: &mut Errors,
) -> bool {
    let Some(ok) = ok_type(&sig.output) else {
        return false;
    };
    let use_of = |name: &str| match how {
        How::Named => Some(String::new()),
        How::Handed(h) => h.iter().any(|n| n == name).then(String::new),
        How::Mutated(m) => m.iter().find(|(n, _)| n == name).map(|(_, u)| u.clone()),
    };
    let eligible = |name: &str| use_of(name).is_some();
    let mut found = Unique {
        any_holder: !matches!(how, How::Named),
        shared: matches!(how, How::Mutated(_)),
        ..Unique::default()
    };
    found.visit_type(ok);
    if found.all.is_empty() {
        return false;
    }
    let (kind, rustc) = match is_async {
        true => (
            "an `async fn`",
            "rustc: \"two closures require unique access\"",
        ),
        false => (
            "a plain fn",
            "rustc: \"captured variable cannot escape `FnMut` closure body\"",
        ),
    };
    let self_borrow = sig.receiver().and_then(receiver_borrow);
    // The `&mut` whose borrow the `Ok` type holds: `self`, else a parameter.
    let mut held = None;
    if let Some((lifetime, true)) = self_borrow.filter(|_| eligible("self")) {
        let lifetime = lifetime.map(|l| l.ident.to_string());
        held = found
            .all
            .iter()
            .find(|(l, _)| l.is_none() || *l == lifetime)
            .map(|(_, span)| ("`self`".to_owned(), use_of("self"), *span));
    }
    for input in &sig.inputs {
        let FnArg::Typed(t) = input else { continue };
        let Type::Reference(r) = ungrouped_type(&t.ty) else {
            continue;
        };
        let (name, used) = match ungrouped_pat(&t.pat) {
            Pat::Ident(p) => (format!("`{}`", p.ident), use_of(&p.ident.to_string())),
            _ => (
                "this `&mut` parameter".to_owned(),
                matches!(how, How::Named).then(String::new),
            ),
        };
        if held.is_some() || r.mutability.is_none() || used.is_none() {
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
        held = borrowed.map(|(_, span)| (name, used, *span));
    }
    let Some((name, used, span)) = held else {
        return false;
    };
    let is_self = name == "`self`";
    let again = if is_self {
        "borrows `self` again".to_owned()
    } else {
        format!("reborrows {name}")
    };
    let (unique, takes, ways) = match used.filter(|u| !u.is_empty()) {
        Some(used) => {
            let ways = if is_self { WAYS_OUT_SHARED } else { WAYS_OUT };
            ("", format!(" whose body takes it uniquely ({used})"), ways)
        }
        None if is_self => ("unique ", " that takes `&mut self`".to_owned(), WAYS_OUT),
        None => ("unique ", String::new(), WAYS_OUT),
    };
    errors.push(syn::Error::new(
        span,
        format!("`#[retry]` cannot return a {unique}borrow of {name} from {kind}{takes}: each attempt {again}, and a {unique}borrow handed out by one attempt would still hold it ({rustc}); {ways}"),
    ));
    true
}
