use backoff_runtime::retry;

unsafe extern "C" {
    #[retry]
    pub safe fn abs(x: i32) -> i32;
}

fn main() {
    let _ = abs(-1);
}
