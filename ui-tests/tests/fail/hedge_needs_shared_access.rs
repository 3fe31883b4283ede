use backoff_runtime::retry;

struct Client {
    sent: u32,
}

impl Client {
    // Two attempts at once cannot both hold `&mut self`, nor both change
    // `buf` or `retries_left`.
    #[retry(hedge = "20ms", attempts = 3)]
    async fn fetch(&mut self, buf: &mut Vec<u8>, mut retries_left: u32) -> Result<usize, std::io::Error> {
        self.sent += 1;
        retries_left -= 1;
        buf.push(retries_left as u8);
        Ok(buf.len())
    }
}

fn main() {}
