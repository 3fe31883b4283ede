//! A body that moves a by-value argument: each attempt runs the body
//! again, and a second attempt would find the argument gone. rustc's own
//! error says so in the closure's terms ("cannot move out of a captured
//! variable in an `FnMut` closure", with a `.clone()` at the use or a
//! `Copy` bound as the fix); the attribute's answer is `clone(..)`.
//!
//! The body is read for the arguments it certainly moves if their type is
//! not `Copy`: a parameter named where a value is taken (a call's or a
//! method's argument, `return`, `let`, a field, `?`, `.await`, `.into()`
//! and `.into_*()`, `for`, an arithmetic operand, anything inside a `move`
//! closure or `async move` block). Whether the type is `Copy` only the
//! compiler knows, so for each such parameter the function gets a check of
//! its type, which compiles to nothing for a `Copy` one; for another it is
//! the one error, in the attribute's terms and naming `clone(name)`, and
//! rustc then reports no borrow error of the same mistake.
//!
//! Another method's receiver (`request.send()`) may or may not be moved:
//! whether `send` takes `self` or `&self` only method resolution knows. For
//! such a call the function gets a closure that makes the same call, never
//! called: rustc infers a closure's kind from what its body moves, after
//! method resolution and knowing `Copy`, so the closure is `FnMut` unless
//! the call takes the argument by value, and a check that it is `FnMut` is
//! the one error, naming `clone(name)`, exactly when rustc would refuse the
//! body. The closure stands at the function's start, so the call is made
//! there only where its meaning cannot differ from the body's: arguments
//! that are literals (another expression may name the body's locals or
//! move a value of its own), outside `unsafe` blocks, in a body without
//! `use` items, and not for a method whose result's type only the call's
//! context gives (`parse`, `as_ref`, `collect`, ...: without a turbofish,
//! the copy would need type annotations). Other calls are left to rustc.

use proc_macro2::{Delimiter, TokenStream, TokenTree};
use quote::{ToTokens, quote_spanned};
use syn::visit::Visit;
use syn::{Block, Expr, FnArg, Pat, ReceiverKind, Signature, Type};

use super::shape::{COPY_PRIMITIVES, receiver_borrow, ungrouped_pat, ungrouped_type};
use crate::attr::RetryArgs;

/// The checks of the by-value arguments the body moves: for each, at its
/// first move, `{ trait MovedArgument<T> {..} impl<T: Copy> MovedArgument<T>
/// for () {} <() as MovedArgument<_>>::moved(&name); }`, the trait's
/// message naming the argument.
pub(crate) fn moved_arguments(sig: &Signature, block: &Block, args: &RetryArgs) -> TokenStream {
    let cloned = |name: &str| {
        args.clone
            .as_ref()
            .is_some_and(|c| c.value.iter().any(|n| n == name))
    };
    // Each parameter that may not be `Copy` (an `impl Trait` too).
    let mut params: Vec<String> = Vec::new();
    for input in &sig.inputs {
        match input {
            FnArg::Receiver(r) => {
                let by_value = match &r.kind {
                    ReceiverKind::Value => true,
                    ReceiverKind::Typed(..) => receiver_borrow(r).is_none(),
                    _ => false,
                };
                if by_value && !cloned("self") {
                    params.push("self".to_owned());
                }
            }
            FnArg::Typed(t) => {
                if let Pat::Ident(p) = ungrouped_pat(&t.pat)
                    && p.by_ref.is_none()
                    && p.subpat.is_none()
                    && !certainly_copy(&t.ty)
                    && !cloned(&unraw(&p.ident))
                {
                    params.push(unraw(&p.ident));
                }
            }
        }
    }
    if params.is_empty() {
        return TokenStream::new();
    }
    // (The body is kept as tokens: it is parsed only when a parameter
    // whose type may not be `Copy` appears where a value may be taken.)
    // (A `move` closure or block takes every parameter it names.)
    let body = block.to_token_stream();
    let words = body.to_string();
    if !words
        .split(|c: char| !c.is_alphanumeric())
        .any(|w| w == "move")
    {
        params.retain(|name| named_by_value(body.clone(), name));
    }
    if params.is_empty() {
        return TokenStream::new();
    }
    let mut checks = TokenStream::new();
    let Some(moves) = read_moves(block, &params) else {
        return checks;
    };
    for (ident, call) in moves.receivers() {
        checks.extend(receiver_check(&ident, &call, &unraw(&sig.ident)));
    }
    for ident in moves.moved {
        let name = unraw(&ident);
        // The value's type, at the move: the error is reported there. (A
        // check of `()` against the type behind a reference: of the value
        // itself, rustc would suggest borrowing it, as a `&` is `Copy`.)
        let span = ident.span();
        // A trait of the function's own, so that its message can name the
        // argument, with a name of its own (rustc writes a name it finds
        // twice in the crate with its path, `f::{closure#0}::..`).
        let trait_name = syn::Ident::new(
            &format!("MovedArgument_{name}_of_{}", unraw(&sig.ident)),
            span,
        );
        let message = format!(
            "`#[retry]`: the body moves `{name}`, and a second attempt would have none: `{{T}}` is not `Copy`"
        );
        let label = format!("`{name}` moved here");
        let note = format!(
            "each attempt runs the body again: give each one its own `Clone::clone` of `{name}` with `#[retry(clone({name}))]`, or borrow it in the body (`&{name}`); a `{name}` that is a `&mut` reference is given again with a reborrow, `&mut *{name}`"
        );
        checks.extend(quote_spanned! {span=>
            {
                #[diagnostic::on_unimplemented(message = #message, label = #label, note = #note)]
                #[allow(non_camel_case_types)]
                trait #trait_name<T: ?::core::marker::Sized> {
                    fn moved(_: &T) {}
                }
                #[diagnostic::do_not_recommend]
                impl<T: ?::core::marker::Sized + ::core::marker::Copy> #trait_name<T> for () {}
                <() as #trait_name<_>>::moved(&#ident);
            }
        });
    }
    checks
}

/// Whether `ty` is, by its name, a shared reference or a primitive:
/// `Copy`; or a `&mut` reference, which the attempts reborrow (or, with a
/// named lifetime stored elsewhere, rustc reports as such).
fn certainly_copy(ty: &Type) -> bool {
    match ungrouped_type(ty) {
        Type::Reference(_) => true,
        Type::Ptr(_) => true,
        Type::Path(p) => {
            p.qself.is_none()
                && p.path.get_ident().is_some_and(|i| {
                    COPY_PRIMITIVES
                        .iter()
                        .chain(&["Duration", "Instant"])
                        .any(|n| i == n)
                })
        }
        _ => false,
    }
}

/// Whether the tokens name `name` other than before `.` (a field or a
/// method, which may borrow; `.await`, `.into()` and `.into_*()` take it;
/// any other method's receiver is checked as well) or `[` (an index).
fn named_by_value(tokens: TokenStream, name: &str) -> bool {
    let tokens: Vec<TokenTree> = tokens.into_iter().collect();
    tokens.iter().enumerate().any(|(i, token)| match token {
        TokenTree::Group(g) => named_by_value(g.stream(), name),
        TokenTree::Ident(ident) if unraw(ident) == name => match tokens.get(i + 1) {
            Some(TokenTree::Punct(p)) if p.as_char() == '.' => {
                matches!(tokens.get(i + 2), Some(TokenTree::Ident(a))
                    if a == "await" || a == "into" || a.to_string().starts_with("into_")
                        || matches!(tokens.get(i + 3), Some(TokenTree::Group(g)) if g.delimiter() == Delimiter::Parenthesis)
                        || matches!(tokens.get(i + 3), Some(TokenTree::Punct(p)) if p.as_char() == ':'))
            }
            Some(TokenTree::Group(g)) => g.delimiter() != Delimiter::Bracket,
            _ => !matches!(tokens.get(i.wrapping_sub(1)), Some(TokenTree::Punct(p)) if p.as_char() == '&'),
        },
        _ => false,
    })
}

/// Those of `names` the body hands itself to something: a field, an
/// argument, the value returned (see [`Moves`]).
pub(super) fn handed_over(block: &Block, names: &[String]) -> Vec<String> {
    handed_over_idents(block, names).iter().map(unraw).collect()
}

/// The same, each as its first move names it.
fn handed_over_idents(block: &Block, names: &[String]) -> Vec<syn::Ident> {
    read_moves(block, names).map_or_else(Vec::new, |m| m.moved)
}

/// The body read for `names`' moves and the method calls they receive.
fn read_moves<'a>(block: &Block, names: &'a [String]) -> Option<Moves<'a>> {
    let block = syn::parse2::<Block>(block.to_token_stream()).ok()?;
    let mut moves = Moves {
        params: names,
        rebound: Vec::new(),
        moved: Vec::new(),
        moving: 0,
        calls: Vec::new(),
        unsafe_blocks: 0,
        imports: false,
        in_macros: Vec::new(),
    };
    moves.visit_block(&block);
    Some(moves)
}

/// Methods whose result's type only the call's context gives: a copy of
/// the call without its context would need type annotations.
const TYPED_BY_CONTEXT: [&str; 10] = [
    "parse",
    "as_ref",
    "as_mut",
    "borrow",
    "borrow_mut",
    "try_into",
    "collect",
    "sum",
    "product",
    "json",
];

/// Methods of the standard library's types that borrow their receiver,
/// the most common on arguments: not checked (a type of the user's with a
/// method of the same name that takes `self` is then left to rustc).
const BORROWING: [&str; 12] = [
    "clone",
    "to_owned",
    "to_string",
    "len",
    "is_empty",
    "as_str",
    "as_bytes",
    "as_slice",
    "iter",
    "iter_mut",
    "contains",
    "lock",
];

/// The check of a method call whose receiver is a by-value argument: a
/// closure making the same call, which is `FnMut` unless the call moves
/// the argument (see the module's documentation).
fn receiver_check(ident: &syn::Ident, call: &syn::ExprMethodCall, function: &str) -> TokenStream {
    let (name, method) = (unraw(ident), &call.method);
    let span = ident.span();
    let trait_name = syn::Ident::new(
        &format!("MovedArgument_{name}_by_{method}_of_{function}"),
        span,
    );
    let message = format!(
        "`#[retry]`: the body moves `{name}` into `{method}`, which takes it by value, and a second attempt would have none"
    );
    let label = format!("`{name}` moved here, by `{method}`");
    let note = format!(
        "each attempt runs the body again: give each one its own `Clone::clone` of `{name}` with `#[retry(clone({name}))]`; a `{name}` that is a `&mut` reference is given again with a reborrow, `(&mut *{name}).{method}(..)`"
    );
    quote_spanned! {span=>
        {
            #[diagnostic::on_unimplemented(message = #message, label = #label, note = #note)]
            #[allow(non_camel_case_types)]
            trait #trait_name {
                fn moved(&self) {}
            }
            #[diagnostic::do_not_recommend]
            impl<F: ?::core::marker::Sized + ::core::ops::FnMut()> #trait_name for F {}
            fn sink<T>(_: T) {}
            #[allow(deprecated, clippy::unit_arg)]
            let probe = || sink(#call);
            #trait_name::moved(&probe);
        }
    }
}

fn unraw(ident: &syn::Ident) -> String {
    let name = ident.to_string();
    name.strip_prefix("r#")
        .map_or_else(|| name.clone(), str::to_owned)
}

struct Moves<'a> {
    params: &'a [String],
    /// Parameters a pattern of the body binds again (their later uses are
    /// left to rustc).
    rebound: Vec<String>,
    /// Each moved parameter, as its first move names it.
    moved: Vec<syn::Ident>,
    /// Inside a `move` closure or `async move` block: every use moves.
    moving: usize,
    /// Method calls on a parameter that may take it by value, to check.
    calls: Vec<(syn::Ident, syn::ExprMethodCall)>,
    /// Inside an `unsafe` block.
    unsafe_blocks: usize,
    /// Whether the body has a `use` item (a method it brings into scope
    /// is not in scope at the function's start).
    imports: bool,
    /// Parameters named inside a macro's tokens (which may bind them
    /// again).
    in_macros: Vec<String>,
}

impl Moves<'_> {
    /// The calls to check, one per parameter, method and arguments, but
    /// for a parameter the body moves for certain (one error each).
    fn receivers(&self) -> Vec<(syn::Ident, syn::ExprMethodCall)> {
        if self.imports {
            return Vec::new();
        }
        let mut seen: Vec<String> = Vec::new();
        self.calls
            .iter()
            .filter(|(ident, call)| {
                let name = unraw(ident);
                let key = format!("{name}.{}", call.to_token_stream());
                !self.moved.iter().any(|m| unraw(m) == name) && !seen.contains(&key) && {
                    seen.push(key);
                    true
                }
            })
            .cloned()
            .collect()
    }

    /// `call`'s receiver, when it is a parameter the call may move and the
    /// call means at the function's start what it means where it is.
    fn receiver(&mut self, call: &syn::ExprMethodCall) {
        let method = call.method.to_string();
        if self.unsafe_blocks > 0
            || BORROWING.contains(&method.as_str())
            || (call.turbofish.is_none() && TYPED_BY_CONTEXT.contains(&method.as_str()))
            || !call.args.iter().all(literal)
        {
            return;
        }
        if let Expr::Path(path) = &*call.receiver
            && path.qself.is_none()
            && path.attrs.is_empty()
            && let Some(ident) = path.path.get_ident()
        {
            let name = unraw(ident);
            if self.params.contains(&name)
                && !self.rebound.contains(&name)
                && !self.in_macros.contains(&name)
            {
                self.calls.push((ident.clone(), call.clone()));
            }
        }
    }
}

/// A literal argument (`"x"`, `3`, `-1`, `&"x"`), which means the same
/// anywhere.
fn literal(expr: &Expr) -> bool {
    match expr {
        Expr::Lit(_) => true,
        Expr::Unary(u) => matches!(u.op, syn::UnOp::Neg(_)) && literal(&u.expr),
        Expr::Reference(r) => r.mutability.is_none() && literal(&r.expr),
        Expr::Paren(p) => literal(&p.expr),
        _ => false,
    }
}

impl Moves<'_> {
    /// `expr`, taken by value: a move if it names a parameter.
    fn taken(&mut self, expr: &Expr) {
        let mut e = expr;
        while let Expr::Paren(p) = e {
            e = &p.expr;
        }
        if let Expr::Path(path) = e
            && path.qself.is_none()
            && let Some(ident) = path.path.get_ident()
        {
            let name = unraw(ident);
            // (Once a pattern binds the name again, it may be that one.)
            if self.params.contains(&name)
                && !self.rebound.contains(&name)
                && !self.moved.iter().any(|n| unraw(n) == name)
            {
                self.moved.push(ident.clone());
            }
        }
    }
}

impl<'ast> Visit<'ast> for Moves<'_> {
    fn visit_expr(&mut self, e: &'ast Expr) {
        match e {
            Expr::Call(c) => c.args.iter().for_each(|a| self.taken(a)),
            Expr::MethodCall(m) => {
                // `into` and `into_*` take their receiver by value (the
                // naming convention of the standard library and the API
                // guidelines).
                let method = m.method.to_string();
                if method == "into" || method.starts_with("into_") {
                    self.taken(&m.receiver);
                } else if self.moving == 0 {
                    self.receiver(m);
                }
                m.args.iter().for_each(|a| self.taken(a));
            }
            Expr::Return(syn::ExprReturn { expr: Some(v), .. })
            | Expr::Break(syn::ExprBreak { expr: Some(v), .. }) => self.taken(v),
            Expr::Struct(s) => s.fields.iter().for_each(|f| self.taken(&f.expr)),
            Expr::Tuple(t) => t.elems.iter().for_each(|v| self.taken(v)),
            Expr::Array(a) => a.elems.iter().for_each(|v| self.taken(v)),
            Expr::Assign(a) => self.taken(&a.right),
            Expr::Try(t) => self.taken(&t.expr),
            Expr::Await(a) => self.taken(&a.base),
            Expr::ForLoop(f) => self.taken(&f.expr),
            Expr::Binary(b) => {
                use syn::BinOp::*;
                if matches!(
                    b.op,
                    Add(_)
                        | Sub(_)
                        | Mul(_)
                        | Div(_)
                        | Rem(_)
                        | BitAnd(_)
                        | BitOr(_)
                        | BitXor(_)
                        | Shl(_)
                        | Shr(_)
                ) {
                    self.taken(&b.left);
                    self.taken(&b.right);
                }
            }
            Expr::Path(_) if self.moving > 0 => self.taken(e),
            _ => {}
        }
        let moving = match e {
            Expr::Closure(c) => c.capture.is_some(),
            Expr::Async(a) => a.capture.is_some(),
            _ => false,
        };
        self.moving += usize::from(moving);
        syn::visit::visit_expr(self, e);
        self.moving -= usize::from(moving);
    }

    // The value before the pattern, which may bind its name again.
    fn visit_local(&mut self, l: &'ast syn::Local) {
        if let Some(init) = &l.init {
            self.taken(&init.expr);
            self.visit_expr(&init.expr);
            if let Some((_, diverge)) = &init.diverge {
                self.visit_expr(diverge);
            }
        }
        self.visit_pat(&l.pat);
    }

    fn visit_pat_ident(&mut self, p: &'ast syn::PatIdent) {
        let name = unraw(&p.ident);
        if self.params.contains(&name) {
            self.rebound.push(name);
        }
        syn::visit::visit_pat_ident(self, p);
    }

    // Items of the body (a nested `fn`) have parameters of their own, and
    // macros' tokens are not read (but for the names they may bind again).
    fn visit_item(&mut self, item: &'ast syn::Item) {
        self.imports |= matches!(item, syn::Item::Use(_));
    }

    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        for name in self.params {
            let words = m.tokens.to_string();
            if !self.in_macros.contains(name)
                && words
                    .split(|c: char| !c.is_alphanumeric() && c != '_')
                    .any(|w| w == name)
            {
                self.in_macros.push(name.clone());
            }
        }
    }

    fn visit_expr_unsafe(&mut self, u: &'ast syn::ExprUnsafe) {
        self.unsafe_blocks += 1;
        syn::visit::visit_expr_unsafe(self, u);
        self.unsafe_blocks -= 1;
    }

    fn visit_expr_closure(&mut self, c: &'ast syn::ExprClosure) {
        // A closure's parameters rebind their names inside it only: a
        // parameter of the function it shadows is left to rustc.
        for input in &c.inputs {
            self.visit_pat(input);
        }
        self.visit_expr(&c.body);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::errors::Errors;

    fn checks(args: &str, item: &str) -> String {
        let mut errors = Errors::default();
        let args = RetryArgs::parse(args.parse().unwrap(), &mut errors);
        let func: syn::ItemFn = syn::parse_str(item).unwrap();
        moved_arguments(&func.sig, &func.block, &args).to_string()
    }

    #[test]
    fn a_moved_argument_is_checked_once_and_a_borrowed_or_cloned_one_not() {
        let item = "fn f(name: String, n: u32, s: &str) -> R { let _ = s.len(); Ok(consume(name) + n + take(name)) }";
        let got = checks("attempts = 2", item);
        // (`n: u32` is `Copy` by its name: not checked.)
        assert_eq!(got.matches("on_unimplemented").count(), 1, "{got}");
        assert!(got.contains("clone(name)"), "{got}");
        assert_eq!(checks("attempts = 2, clone(name, n)", item), "");
        // Rebound in the body: what follows is left to rustc; the move that
        // rebinds it is checked.
        let item = "fn f(name: String) -> R { let name = name.clone(); Ok(consume(name)) }";
        assert_eq!(checks("attempts = 2", item), "");
        let item = "fn f(name: String) -> R { let name = name.into_bytes(); Ok(consume(name)) }";
        assert!(checks("attempts = 2", item).contains("clone(name)"));
        // A method's receiver may be moved: checked by a closure making the
        // same call, but where the copy could mean something else.
        let item = "fn f(name: Name) -> R { Ok(name.size()) }";
        let got = checks("attempts = 2", item);
        assert!(
            got.contains("FnMut") && got.contains("name . size ()"),
            "{got}"
        );
        for item in [
            "fn f(req: Req) -> R { let h = header(); Ok(req.header(h)) }",
            "fn f(req: Req) -> R { use x::Send; Ok(req.send()) }",
            "fn f(req: Req) -> R { Ok(unsafe { req.send() }) }",
            "fn f(s: String) -> R { Ok(s.parse()?) }",
            "fn f(req: Req) -> R { m!(let req = 1); Ok(req.send()) }",
        ] {
            assert_eq!(checks("attempts = 2", item), "", "{item}");
        }
        let item = "fn f(req: Req) -> R { let req = req.header(\"a\", 1); req.send() }";
        let got = checks("attempts = 2", item);
        assert_eq!(got.matches("on_unimplemented").count(), 1, "{got}");
        assert!(got.contains("by_header"), "{got}");
        // Inside a `move` closure, any use; `self` by value.
        let item = "fn f(self, name: String) -> R { let g = move || name.len(); Ok(run(self)) }";
        let got = checks("attempts = 2", item);
        assert!(got.contains("clone(self)"), "{got}");
        assert!(got.contains("clone(name)"), "{got}");
    }
}
