//! Turning puffin on for a run and reading its scopes back as [`CpuSpan`]s.
//!
//! Scopes are off by default (`puffin::set_scopes_on(false)` costs one relaxed atomic load per
//! scope). A [`CpuCapture`] turns them on, registers a frame sink with puffin's global profiler,
//! and on [`CpuCapture::stop`] parses the frames it received. Captures may overlap (tests run in
//! parallel); scopes stay on while any is active, and each keeps only the spans inside its own
//! time window.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use puffin::{FrameData, FrameSinkId, GlobalProfiler, Reader, ScopeCollection, Stream};

use super::trace::CpuSpan;

static ACTIVE: AtomicUsize = AtomicUsize::new(0);
/// Whether scopes were on before the first active capture turned them on (the app's setting).
static WERE_ON: AtomicBool = AtomicBool::new(false);

pub struct CpuCapture {
    sink: Option<FrameSinkId>,
    frames: Arc<Mutex<Vec<Arc<FrameData>>>>,
    start_ns: i64,
}

impl CpuCapture {
    pub fn start() -> Self {
        if ACTIVE.fetch_add(1, Ordering::SeqCst) == 0 {
            WERE_ON.store(puffin::are_scopes_on(), Ordering::SeqCst);
        }
        puffin::set_scopes_on(true);
        let frames: Arc<Mutex<Vec<Arc<FrameData>>>> = Arc::default();
        let into = frames.clone();
        let mut profiler = GlobalProfiler::lock();
        let sink = profiler.add_sink(Box::new(move |frame| {
            if let Ok(mut frames) = into.lock() {
                frames.push(frame);
            }
        }));
        // Scopes registered before this sink existed were described in earlier frames only.
        profiler.emit_scope_snapshot();
        Self { sink: Some(sink), frames, start_ns: puffin::now_ns() }
    }

    /// Hands the scopes closed so far to the sinks, as one puffin frame.
    pub fn new_frame(&self) {
        GlobalProfiler::lock().new_frame();
    }

    /// Every scope that closed on any thread since [`CpuCapture::start`], outermost first.
    pub fn stop(mut self) -> Vec<CpuSpan> {
        self.new_frame();
        let end_ns = puffin::now_ns();
        self.release();
        let frames = std::mem::take(&mut *self.frames.lock().unwrap_or_else(|e| e.into_inner()));
        let mut details = ScopeCollection::default();
        for frame in &frames {
            for d in &frame.scope_delta {
                details.insert(d.clone());
            }
        }
        let mut spans = Vec::new();
        for frame in &frames {
            let Ok(unpacked) = frame.unpacked() else { continue };
            for (thread, info) in &unpacked.thread_streams {
                read_scopes(&info.stream, 0, 0, &thread.name, &details, &mut spans);
            }
        }
        spans.retain(|s| s.start_ns >= self.start_ns && s.start_ns <= end_ns);
        spans.sort_by_key(|s| (s.start_ns, std::cmp::Reverse(s.dur_ns)));
        spans
    }

    fn release(&mut self) {
        if let Some(sink) = self.sink.take() {
            GlobalProfiler::lock().remove_sink(sink);
            if ACTIVE.fetch_sub(1, Ordering::SeqCst) == 1 {
                puffin::set_scopes_on(WERE_ON.load(Ordering::SeqCst));
            }
        }
    }
}

impl Drop for CpuCapture {
    fn drop(&mut self) {
        self.release();
    }
}

fn read_scopes(
    stream: &Stream,
    offset: u64,
    depth: u32,
    thread: &str,
    details: &ScopeCollection,
    out: &mut Vec<CpuSpan>,
) {
    // A malformed stream loses its scopes, not the whole trace.
    let Ok(reader) = Reader::with_offset(stream, offset) else { return };
    for scope in reader.flatten() {
        let (name, location) = match details.fetch_by_id(&scope.id) {
            Some(d) => (d.name().to_string(), format!("{}:{}", d.file_path, d.line_nr)),
            None => (format!("scope {}", scope.id.0), String::new()),
        };
        out.push(CpuSpan {
            name,
            data: scope.record.data.to_string(),
            location,
            thread: thread.to_string(),
            start_ns: scope.record.start_ns,
            dur_ns: scope.record.duration_ns,
            depth,
        });
        read_scopes(stream, scope.child_begin_position, depth + 1, thread, details, out);
    }
}
