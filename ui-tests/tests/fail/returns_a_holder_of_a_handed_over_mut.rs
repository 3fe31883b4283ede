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

fn main() {}
