//! The item under the attribute: a function with a body, as written or as
//! `#[async_trait]` rewrote it, or the error for anything else.

use proc_macro2::{Delimiter, Span, TokenStream, TokenTree};
use syn::spanned::Spanned;
use syn::{
    Attribute, Block, Expr, ItemFn, Pat, ReturnType, Signature, Stmt, TraitItemFn, Type, Visibility,
};

/// A function with a body: a free fn, a method, or a trait method with a
/// default body.
pub(super) struct Function {
    pub(super) attrs: Vec<Attribute>,
    pub(super) vis: Visibility,
    pub(super) sig: Signature,
    pub(super) block: Block,
}

impl Function {
    /// Whether the body runs asynchronously: an `async fn`, or a method that
    /// `#[async_trait]` has already turned into `Box::pin(async move { .. })`.
    pub(super) fn is_async(&self) -> bool {
        self.sig.asyncness.is_some() || async_trait_body(&self.block).is_some()
    }

    /// The type the body evaluates to: the declared return type, or for an
    /// `#[async_trait]` method the future's output.
    pub(super) fn body_type(&self) -> Option<Type> {
        if self.sig.asyncness.is_none()
            && let Some(ret) = async_trait_body(&self.block)
        {
            return Some(ret.1.clone());
        }
        match &self.sig.output {
            ReturnType::Type(_, ty) => Some((**ty).clone()),
            ReturnType::Default => None,
        }
    }
}

// Input:  a method body as `#[async_trait]` writes it:
//             Box::pin(async move { ...; let __ret: R = { body }; __ret })
// Output: the `{ body }` block and `R`, when the body has that shape.
fn async_trait_body(block: &Block) -> Option<(&Block, &Type)> {
    let [Stmt::Expr(Expr::Call(call), None)] = block.stmts.as_slice() else {
        return None;
    };
    let Expr::Path(callee) = &*call.func else {
        return None;
    };
    let mut segments = callee.path.segments.iter().rev();
    let is_box_pin = matches!(
        (segments.next(), segments.next()),
        (Some(pin), Some(boxed)) if pin.ident == "pin" && boxed.ident == "Box"
    );
    let (true, Some(Expr::Async(inner)), 1) = (is_box_pin, call.args.first(), call.args.len())
    else {
        return None;
    };
    inner.block.stmts.iter().find_map(|stmt| match stmt {
        Stmt::Local(local) => match (&local.pat, &local.init) {
            (Pat::Type(typed), Some(init)) if is_ret_binding(&typed.pat) => match &*init.expr {
                Expr::Block(body) => Some((&body.block, &*typed.ty)),
                _ => None,
            },
            _ => None,
        },
        _ => None,
    })
}

fn is_ret_binding(pat: &Pat) -> bool {
    matches!(pat, Pat::Ident(p) if p.ident == "__ret")
}

/// [`async_trait_body`], mutably: the `{ body }` block to replace, for
/// exactly the bodies `async_trait_body` recognizes.
pub(super) fn async_trait_body_mut(block: &mut Block) -> Option<&mut Block> {
    async_trait_body(block)?;
    let [Stmt::Expr(Expr::Call(call), None)] = block.stmts.as_mut_slice() else {
        return None;
    };
    let Some(Expr::Async(inner)) = call.args.first_mut() else {
        return None;
    };
    inner.block.stmts.iter_mut().find_map(|stmt| match stmt {
        Stmt::Local(local) => match (&local.pat, &mut local.init) {
            (Pat::Type(typed), Some(init)) if is_ret_binding(&typed.pat) => match &mut *init.expr {
                Expr::Block(body) => Some(&mut body.block),
                _ => None,
            },
            _ => None,
        },
        _ => None,
    })
}

// Input: any item.
// Output: the function's parts, or an error spanned on what is not a
// function with a body.
pub(super) fn parse_function(item: &TokenStream) -> syn::Result<Function> {
    if let Some(f) = parse_function_head(item) {
        return Ok(f);
    }
    let item = item.clone();
    if let Ok(f) = syn::parse2::<ItemFn>(item.clone()) {
        return Ok(Function {
            attrs: f.attrs,
            vis: f.vis,
            sig: f.sig,
            block: *f.block,
        });
    }
    // A trait method with a default body parsed as an `ItemFn` above.
    if let Ok(TraitItemFn {
        default: None,
        sig,
        semi_token,
        ..
    }) = syn::parse2::<TraitItemFn>(item.clone())
    {
        return Err(syn::Error::new(
            semi_token.map_or_else(|| sig.span(), |s| s.span),
            "`#[retry]` needs a function body to run again, and this declaration has none (on a trait method, put `#[retry]` on the implementations or give it a default body; a function in an `extern` block cannot be retried in place: wrap it in a function of your own)",
        ));
    }
    let span = item
        .clone()
        .into_iter()
        .next()
        .map_or_else(Span::call_site, |tt| tt.span());
    // `safe fn f();` in an `unsafe extern` block (syn reads neither).
    let words: Vec<String> = item
        .clone()
        .into_iter()
        .filter_map(|tt| match tt {
            TokenTree::Ident(i) => Some(i.to_string()),
            _ => None,
        })
        .take(4)
        .collect();
    if words
        .iter()
        .position(|w| w == "safe")
        .is_some_and(|i| words.get(i + 1).is_some_and(|w| w == "fn"))
    {
        return Err(syn::Error::new(
            span,
            "`#[retry]` needs a function body to run again, and a function in an `extern` block has none: wrap it in a function of your own and put `#[retry]` there",
        ));
    }
    if let Ok(syn::Expr::Closure(closure)) = syn::parse2::<syn::Expr>(item.clone()) {
        let (run, dots) = match closure.asyncness {
            Some(_) => ("retry_async", "async { .. }"),
            None => ("retry", ".."),
        };
        return Err(syn::Error::new(
            span,
            format!(
                "`#[retry]` can only be applied to functions, not to a closure; move the body into a `fn` with `#[retry]`, or run the closure through a policy: `Policy::default().{run}(|| {dots})`"
            ),
        ));
    }
    let what = match syn::parse2::<syn::Item>(item) {
        Ok(item) => describe(&item),
        Err(_) => "this",
    };
    Err(syn::Error::new(
        span,
        format!("`#[retry]` can only be applied to functions, not to {what}"),
    ))
}

// Input:  `#[attrs] vis fn name(args) -> R { body }`
// Output: the function, its body kept as the tokens it came as (one verbatim
//         statement): nothing in it is parsed, and the expansion hands it
//         back whole. Only for a body that starts with neither an attribute
//         (an inner `#![..]`, or an item's) nor a word that may begin an item
//         (`use`, `fn`, `const`, `unsafe`, ..) or `#[async_trait]`'s
//         `Box::pin(..)`: those bodies, and anything not a function, are
//         parsed in full by `parse_function`.
fn parse_function_head(item: &TokenStream) -> Option<Function> {
    let mut head: Vec<TokenTree> = item.clone().into_iter().collect();
    let TokenTree::Group(body) = head.pop()? else {
        return None;
    };
    if body.delimiter() != Delimiter::Brace {
        return None;
    }
    let stream = body.stream();
    match stream.clone().into_iter().next() {
        None => {}
        Some(TokenTree::Punct(p)) if p.as_char() == '#' => return None,
        Some(TokenTree::Ident(word)) => {
            let word = word.to_string();
            let item_like = [
                "use",
                "fn",
                "struct",
                "enum",
                "union",
                "impl",
                "trait",
                "mod",
                "static",
                "const",
                "type",
                "extern",
                "pub",
                "unsafe",
                "async",
                "macro_rules",
                "auto",
                "safe",
                "Box",
            ];
            if item_like.contains(&word.as_str()) {
                return None;
            }
        }
        Some(_) => {}
    }
    let parse_head = |input: syn::parse::ParseStream<'_>| {
        let attrs = input.call(Attribute::parse_outer)?;
        let vis: Visibility = input.parse()?;
        let sig: Signature = input.parse()?;
        Ok((attrs, vis, sig))
    };
    let (attrs, vis, sig) =
        syn::parse::Parser::parse2(parse_head, head.into_iter().collect()).ok()?;
    Some(Function {
        attrs,
        vis,
        sig,
        block: Block {
            brace_token: syn::token::Brace(body.delim_span()),
            stmts: vec![Stmt::Expr(Expr::Verbatim(stream), None)],
        },
    })
}

fn describe(item: &syn::Item) -> &'static str {
    match item {
        syn::Item::Struct(_) => "a struct",
        syn::Item::Enum(_) => "an enum",
        syn::Item::Impl(_) => "an impl block (put it on the methods)",
        syn::Item::Trait(_) => "a trait (put it on the methods)",
        syn::Item::Const(_) => "a const",
        syn::Item::Static(_) => "a static",
        syn::Item::Mod(_) => "a module",
        syn::Item::Type(_) => "a type alias",
        syn::Item::Union(_) => "a union",
        syn::Item::Use(_) => "a use declaration",
        syn::Item::Macro(_) => "a macro invocation",
        _ => "this item",
    }
}
