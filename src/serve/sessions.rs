//! The live games, bounded: at most `max` at once, and a game nobody has touched for `idle`
//! expires (one whose engine is thinking waits for its move first). So however many people
//! come and go, the server's memory stays flat.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use axum::http::StatusCode;

use super::errors::ApiError;
use super::table::Table;
use crate::core::rng::mix64;

/// A span of time as people say it: `30 minutes`, `1 minute`, `45 seconds`.
fn minutes(d: Duration) -> String {
    match d.as_secs() {
        60 => "1 minute".into(),
        s if s >= 60 && s % 60 == 0 => format!("{} minutes", s / 60),
        1 => "1 second".into(),
        s => format!("{s} seconds"),
    }
}

/// A live game and when it was last asked for.
pub struct Session {
    pub table: Box<dyn Table>,
    last_seen: Instant,
}

/// A game shared between the requests that touch it.
pub type SharedSession = Arc<Mutex<Session>>;

/// Locks a game (a request that panicked while holding it leaves it as it was).
pub fn lock(session: &SharedSession) -> MutexGuard<'_, Session> {
    session.lock().unwrap_or_else(|p| p.into_inner())
}

pub struct Sessions {
    games: Mutex<HashMap<String, SharedSession>>,
    max: usize,
    idle: Duration,
    /// Game numbers, mixed into ids that do not follow each other.
    counter: AtomicU64,
    salt: u64,
}

impl Sessions {
    pub fn new(max: usize, idle: Duration, salt: u64) -> Sessions {
        Sessions {
            games: Mutex::new(HashMap::new()),
            max: max.max(1),
            idle,
            counter: AtomicU64::new(0),
            salt,
        }
    }

    fn games(&self) -> MutexGuard<'_, HashMap<String, SharedSession>> {
        self.games.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A new id and the game's number (for its default seed).
    pub fn next_id(&self) -> (String, u64) {
        let n = self.counter.fetch_add(1, Ordering::Relaxed);
        (format!("{:016x}", mix64(self.salt ^ n)), n)
    }

    fn full(&self) -> ApiError {
        ApiError::new(
            StatusCode::TOO_MANY_REQUESTS,
            format!(
                "The server is busy: {} games are going on, its most at once. A game left \
                 alone ends after {}; please try again later.",
                self.max,
                minutes(self.idle)
            ),
        )
    }

    /// Refuses when the server is at its cap even after expiring idle games.
    pub fn check_room(&self) -> Result<(), ApiError> {
        self.expire();
        if self.len() >= self.max {
            return Err(self.full());
        }
        Ok(())
    }

    /// Adds a game under `id`; expired games go first, and a server at its cap refuses.
    pub fn insert(&self, id: String, table: Box<dyn Table>) -> Result<SharedSession, ApiError> {
        self.expire();
        let mut games = self.games();
        if games.len() >= self.max {
            return Err(self.full());
        }
        let session = Arc::new(Mutex::new(Session {
            table,
            last_seen: Instant::now(),
        }));
        games.insert(id, session.clone());
        Ok(session)
    }

    /// The game `id`, marked as seen now.
    pub fn get(&self, id: &str) -> Result<SharedSession, ApiError> {
        let session = self
            .games()
            .get(id)
            .cloned()
            .ok_or_else(|| self.unknown(id))?;
        lock(&session).last_seen = Instant::now();
        Ok(session)
    }

    /// Ends the game `id`; an engine still thinking for it is asked to stop, and finishes
    /// alone.
    pub fn remove(&self, id: &str) -> Result<(), ApiError> {
        let removed = self.games().remove(id);
        match removed {
            Some(session) => {
                // Nothing is thinking: nothing to stop.
                let _ = lock(&session).table.stop();
                Ok(())
            }
            None => Err(self.unknown(id)),
        }
    }

    fn unknown(&self, id: &str) -> ApiError {
        let shown: String = id.chars().take(40).collect();
        ApiError::not_found(format!(
            "no game '{shown}' (games expire after {} s untouched)",
            self.idle.as_secs()
        ))
    }

    /// Removes the games idle for longer than the limit; returns how many.
    pub fn expire(&self) -> usize {
        let expired: Vec<SharedSession> = {
            let mut games = self.games();
            let old: Vec<String> = games
                .iter()
                .filter(|(_, s)| {
                    let s = lock(s);
                    s.last_seen.elapsed() > self.idle && !s.table.is_thinking()
                })
                .map(|(id, _)| id.clone())
                .collect();
            old.iter().filter_map(|id| games.remove(id)).collect()
        };
        // Dropped outside the lock: a game's engines may take a moment to wind down.
        let n = expired.len();
        drop(expired);
        n
    }

    pub fn len(&self) -> usize {
        self.games().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn max(&self) -> usize {
        self.max
    }

    pub fn idle(&self) -> Duration {
        self.idle
    }
}
