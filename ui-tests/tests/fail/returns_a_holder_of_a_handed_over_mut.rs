// regex-automata's `Utf8Compiler::new`: the body hands its `&'a mut`
// arguments to a type with their lifetime, whose name does not say it
// holds them: one error, naming the ways out (rustc's "captured variable
// cannot escape `FnMut` closure body", before).
use backoff_runtime::retry;

pub struct State {
    uncompiled: Vec<u8>,
}
pub struct Utf8Compiler<'a> {
    builder: &'a mut Vec<u8>,
    state: &'a mut State,
}

impl<'a> Utf8Compiler<'a> {
    #[retry(immediate, attempts = 2)]
    pub fn new(builder: &'a mut Vec<u8>, state: &'a mut State) -> Result<Utf8Compiler<'a>, String> {
        state.uncompiled.clear();
        Ok(Utf8Compiler { builder, state })
    }
}

// serde_json's `parse_str`: the `'s` of `&'s mut self` and of the scratch
// buffer, which the body hands to a call, is in the `Ok` value.
pub enum Reference<'b, 'c, T: ?Sized + 'static> {
    Borrowed(&'b T),
    Copied(&'c T),
}

impl State {
    fn parse_bytes<'s>(&'s mut self, scratch: &'s mut Vec<u8>) -> Result<Reference<'static, 's, [u8]>, String> {
        scratch.extend_from_slice(&self.uncompiled);
        Ok(Reference::Copied(&scratch[..]))
    }

    #[retry(immediate, attempts = 2)]
    pub fn parse_str<'s>(&'s mut self, scratch: &'s mut Vec<u8>) -> Result<Reference<'static, 's, [u8]>, String> {
        self.parse_bytes(scratch)
    }
}

fn main() {}
