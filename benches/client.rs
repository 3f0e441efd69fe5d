//! Client throughput: a local server streams 200 000 one-character tokens as fast as it can
//! (SSE events packed into 64 KiB writes); we time the client from its first token to `Finished`
//! (SSE parsing, JSON decoding, event delivery). Run: `cargo bench --bench client`.

#[allow(dead_code)]
#[path = "../tests/all/common/server.rs"]
mod server;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use futures::StreamExt;
use server::{Reply, Server};
use skillpipe::model::{ChatRequest, Message, ProviderKind, Settings, StreamEvent, provider_for};
use std::time::{Duration, Instant};

const TOKENS: usize = 200_000;

fn reply() -> Reply {
    Reply::text(vec!["t"; TOKENS]).split_every(64 * 1024)
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let server = Server::start([]);
    let provider =
        provider_for(&Settings::new(ProviderKind::OpenAi, &server.url, "bench")).unwrap();

    // One streamed answer; the time from the first token to the end.
    let run = || {
        server.push(reply());
        rt.block_on(async {
            let mut stream = provider.stream(ChatRequest::new("", vec![Message::user("go")]));
            let mut first = None;
            let mut tokens = 0usize;
            while let Some(ev) = stream.next().await {
                match ev.expect("stream ok") {
                    StreamEvent::Text(t) => {
                        first.get_or_insert_with(Instant::now);
                        tokens += t.len();
                    }
                    StreamEvent::Finished { .. } => break,
                    _ => {}
                }
            }
            assert_eq!(tokens, TOKENS);
            first.expect("tokens arrived").elapsed()
        })
    };

    let warm = run();
    println!(
        "client: {TOKENS} tokens in {:.1} ms = {:.0} tokens/s",
        warm.as_secs_f64() * 1e3,
        TOKENS as f64 / warm.as_secs_f64()
    );

    let mut group = c.benchmark_group("client");
    group.throughput(Throughput::Elements(TOKENS as u64));
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(5));
    group.bench_function("openai_stream_200k_tokens", |b| {
        b.iter_custom(|iters| (0..iters).map(|_| run()).sum())
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
