//! Turning puffin on for a run and reading its scopes back as [`CpuSpan`]s.
//!
//! Scopes are off by default (`puffin::set_scopes_on(false)` costs one relaxed atomic load per
//! scope). A [`CpuCapture`] turns them on, registers a frame sink with puffin's global profiler,
//! and on [`CpuCapture::stop`] parses the frames it received. Captures may overlap (tests run in
//! parallel); scopes stay on while any is active, and each keeps only the spans inside its own
//! time window.
//!
//! Scope *descriptions* (names, files) reach sinks only once, in the frame after a scope is first
//! used, and puffin drops a requested full snapshot when that frame turns out empty. So one
//! permanent sink keeps every description in [`SCOPES`], and is installed with a frame that
//! cannot be empty; a capture resolves names from there, whichever frame described them.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use puffin::{FrameData, FrameSinkId, GlobalProfiler, Reader, ScopeCollection, ScopeDetails, Stream, StreamInfo, ThreadInfo};

use super::trace::CpuSpan;

static ACTIVE: AtomicUsize = AtomicUsize::new(0);
/// Every scope description puffin has handed out since the first capture.
static SCOPES: OnceLock<Mutex<ScopeCollection>> = OnceLock::new();

fn scopes() -> &'static Mutex<ScopeCollection> {
    SCOPES.get_or_init(|| {
        let mut profiler = GlobalProfiler::lock();
        profiler.add_sink(Box::new(|frame| {
            if let Some(scopes) = SCOPES.get() {
                let mut scopes = scopes.lock().unwrap_or_else(|e| e.into_inner());
                for d in &frame.scope_delta {
                    scopes.insert(d.clone());
                }
            }
        }));
        // Scopes used before this sink existed were described in frames it never saw: ask for
        // a full snapshot, in a frame made non-empty by one user scope of our own.
        let ids = profiler.register_user_scopes(&[ScopeDetails::from_scope_name("scope sink installed")]);
        let mut info = StreamInfo::default();
        let now = puffin::now_ns();
        let (offset, _) = info.stream.begin_scope(|| now, ids[0], "");
        info.stream.end_scope(offset, now);
        info.num_scopes = 1;
        info.depth = 1;
        info.range_ns = (now, now);
        let thread = ThreadInfo { start_time_ns: Some(now), name: "xpu-workbench profiler".into() };
        profiler.report_user_scopes(thread, &info.as_stream_into_ref());
        profiler.emit_scope_snapshot();
        // The frame goes to the sink above, which takes `SCOPES`: not initialised until this
        // closure returns, so take the descriptions from the frame by hand below instead.
        let collected: Arc<Mutex<ScopeCollection>> = Arc::default();
        let into = collected.clone();
        let once = profiler.add_sink(Box::new(move |frame| {
            let mut scopes = into.lock().unwrap_or_else(|e| e.into_inner());
            for d in &frame.scope_delta {
                scopes.insert(d.clone());
            }
        }));
        profiler.new_frame();
        profiler.remove_sink(once);
        let collected = collected.lock().unwrap_or_else(|e| e.into_inner()).clone();
        Mutex::new(collected)
    })
}
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
        scopes();
        let frames: Arc<Mutex<Vec<Arc<FrameData>>>> = Arc::default();
        let into = frames.clone();
        let sink = GlobalProfiler::lock().add_sink(Box::new(move |frame| {
            if let Ok(mut frames) = into.lock() {
                frames.push(frame);
            }
        }));
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
        let details = scopes().lock().unwrap_or_else(|e| e.into_inner()).clone();
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
