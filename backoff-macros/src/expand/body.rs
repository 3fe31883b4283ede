//! The attempt: the function's body, in the user's braces, after what each
//! attempt starts with (its `context`, reborrows and clones), run as a
//! closure or a future.

use proc_macro2::{Delimiter, Group, Span, TokenStream};
use quote::{ToTokens, quote, quote_spanned};
use syn::{Block, Ident, Pat, Stmt};

use super::names::Names;
use super::params::{Reborrow, rename_self};
use super::timeouts::attempt_timeout;

/// The body, ready to be an attempt.
pub(super) struct Body {
    /// `let __backoff_context = __backoff_call.context();`, before the
    /// attempt, with `context = ctx`.
    pub(super) context_value: Option<TokenStream>,
    /// The items the body starts with, what each attempt starts with, and
    /// the body's other statements: see `block` and `async_block`, one of
    /// which an expansion builds.
    items: TokenStream,
    prologue: TokenStream,
    stmts: TokenStream,
    /// The user's braces.
    braces: Span,
    /// The body's opening brace.
    pub(super) open: Span,
}

impl Body {
    fn braced(&self, inner: TokenStream) -> Group {
        let mut group = Group::new(Delimiter::Brace, inner);
        group.set_span(self.braces);
        group
    }

    /// The body in the user's braces, after what the attempt starts with.
    pub(super) fn block(&self) -> Group {
        let (items, prologue, stmts) = (&self.items, &self.prologue, &self.stmts);
        self.braced(quote!(#items #prologue #stmts))
    }

    /// The same for an `async fn`, whose type is fixed first.
    pub(super) fn async_block(&self, n: &Names<'_>) -> Group {
        let (p, ret) = (&n.p, &n.ret);
        let (items, prologue, stmts) = (&self.items, &self.prologue, &self.stmts);
        // An async body's type is fixed before the body is checked (a
        // `return` never taken, as `async-trait` does): a `return` of the
        // wrong type in the body is then one error, at that `return`.
        self.braced(quote! {
            #items
            if false {
                return #p::outcome_type::<#ret>();
            }
            #prologue
            #stmts
        })
    }
}

// Input:  `{ items; stmts }`, the reborrowed `&mut` parameters, the
//         `clone(..)` parameters whose clones are `mut`, `context = ctx`.
// Output: { items; let ctx: AttemptContext = __backoff_context;
//           let dst = &mut *dst; let v = Clone::clone(&v); stmts }
//         and, for an `async fn`, the same with `if false { return outcome_type::<R>(); }`
//         after the items.
pub(super) fn body(
    n: &Names<'_>,
    block: &Block,
    reborrows: &[Reborrow],
    cloned_mut: &[Ident],
) -> Body {
    let p = &n.p;
    // What each attempt starts with: its `context`, its reborrows of the
    // `&mut` parameters, its clones of the `clone(..)` parameters.
    let mut prologue = TokenStream::new();
    // `chaos = CHAOS`: the attempt's draw, before anything of the body.
    prologue.extend(super::chaos::inject(n));
    // `context = ctx`: the attempt's number and whether it is the last,
    // computed before the attempt (no clock, no allocation).
    let context_value = n.args.context.as_ref().map(|ctx| {
        let name = &ctx.value;
        let ty = quote_spanned! {ctx.span=> #p::AttemptContext };
        let mutability = n.args.context_mut;
        prologue.extend(quote!(let #mutability #name: #ty = __backoff_context;));
        let context = super::timeouts::context(n);
        quote! {
            let __backoff_context = #context;
        }
    });
    for Reborrow { mutability, name } in reborrows {
        // (A `_name` parameter: the reborrow is ours, and so would be
        // clippy's pedantic lints on using and rebinding it.)
        if name.to_string().starts_with('_') {
            prologue.extend(quote!(
                #[allow(clippy::used_underscore_binding, clippy::no_effect_underscore_binding)]
            ));
        }
        prologue.extend(quote!(let #mutability #name = &mut *#name;));
    }
    // The body's statements, to put in the user's braces after what the
    // attempt starts with (one block: no `unused_braces` on a nested one).
    // Items the body starts with (`use std::fmt::Write;`) stay first, so
    // `clippy::items_after_statements` sees the body as written.
    let leading = block
        .stmts
        .iter()
        .take_while(|stmt| matches!(stmt, Stmt::Item(_)))
        .count();
    let mut items = TokenStream::new();
    for stmt in &block.stmts[..leading] {
        stmt.to_tokens(&mut items);
    }
    let mut stmts = TokenStream::new();
    for stmt in &block.stmts[leading..] {
        stmt.to_tokens(&mut stmts);
    }
    clones(n, cloned_mut, &mut prologue, &mut stmts);
    Body {
        context_value,
        items,
        prologue,
        stmts,
        braces: block.brace_token.span.join(),
        open: block.brace_token.span.open(),
    }
}

// Input:  clone(a, self), the names whose clones are `mut`.
// Output: let mut a = Clone::clone(&a); let __backoff_self = Clone::clone(&self);
//         added to `prologue`, and each `self` of the body renamed.
fn clones(
    n: &Names<'_>,
    cloned_mut: &[Ident],
    prologue: &mut TokenStream,
    stmts: &mut TokenStream,
) {
    for name in n.args.clone.iter().flat_map(|c| &c.value) {
        // Spanned on the name in `clone(..)`: a type that is not `Clone` is
        // reported there.
        let cloned = quote_spanned! {name.span()=> ::core::clone::Clone::clone(&#name) };
        if name == "self" {
            let renamed = Ident::new("__backoff_self", name.span());
            let mutability = cloned_mut.iter().any(|m| m == "self").then(|| quote!(mut));
            prologue.extend(quote!(let #mutability #renamed = #cloned;));
            *stmts = rename_self(std::mem::take(stmts));
        } else {
            // The clone takes the parameter's name and span: the body's uses
            // resolve to it.
            let param = n
                .sig
                .inputs
                .iter()
                .find_map(|input| match input {
                    syn::FnArg::Typed(t) => match &*t.pat {
                        Pat::Ident(p) if p.ident == *name => Some(p.ident.clone()),
                        _ => None,
                    },
                    syn::FnArg::Receiver(_) => None,
                })
                .unwrap_or_else(|| name.clone());
            let mutability = cloned_mut.contains(&param).then(|| quote!(mut));
            prologue.extend(quote!(let #mutability #param = #cloned;));
        }
    }
}

// Input:  the body.
// Output: attempt_sync::<R, _>(|| { body })                 // a plain fn
//         async { body }.await                             // an `async fn`
//         match timeout(D, attempt::<R, _>(async { body })).await { .. }   // `attempt_timeout`
pub(super) fn attempt(n: &Names<'_>, body: &Body) -> TokenStream {
    let (p, ret) = (&n.p, &n.ret);
    match (&n.args.attempt_timeout, n.is_async) {
        (Some(t), true) => attempt_timeout(n, t, &body.async_block(n)),
        (_, true) => {
            let asyncness = quote_spanned!(body.open=> async);
            let async_body = body.async_block(n);
            // (The block's output type is fixed inside it: see `body`.)
            quote!(#asyncness #async_body.await)
        }
        (_, false) => {
            // The closure starts where the body does, so it is the user's
            // code to the lints (`clippy::needless_return` in the body).
            let bars = quote_spanned!(body.open=> ||);
            let block = body.block();
            quote!(#p::attempt_sync::<#ret, _>(#bars #block))
        }
    }
}
