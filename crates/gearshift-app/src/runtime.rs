//! The tokio runtime zbus runs on (the workspace builds zbus with its tokio feature), on a
//! thread of its own. The UI awaits its futures from the glib main loop: a tokio `JoinHandle`
//! is a plain future, so glib polls it without blocking.

use std::future::Future;
use std::sync::OnceLock;

static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();

/// Starts the runtime (once; later calls do nothing).
pub fn start() -> std::io::Result<()> {
    if RUNTIME.get().is_some() {
        return Ok(());
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .thread_name("gearshift-dbus")
        .enable_all()
        .build()?;
    // A concurrent start won the race: its runtime serves; this one is dropped.
    let _ = RUNTIME.set(rt);
    Ok(())
}

/// Spawns `fut` on the runtime; `None` before [`start`].
pub fn spawn<F>(fut: F) -> Option<tokio::task::JoinHandle<F::Output>>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    RUNTIME.get().map(|rt| rt.spawn(fut))
}

/// Runs `fut` on the runtime and waits for it without blocking the calling (main) thread.
/// `None` if the runtime is not started or the task panicked.
pub async fn on_tokio<F>(fut: F) -> Option<F::Output>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    spawn(fut)?.await.ok()
}
