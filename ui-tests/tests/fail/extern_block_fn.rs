use backoff_runtime::retry;

unsafe extern "C" {
    #[retry]
    fn abs(x: i32) -> i32;
}

fn main() {}
