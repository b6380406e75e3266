//! A per-tool circuit breaker: after `failureThreshold` consecutive failed executions
//! the circuit opens and calls fail at once with `CIRCUIT_OPEN`; after
//! `recoveryTimeoutMs` one trial call is let through (half-open); `successThreshold`
//! successful trials close it, a failed trial opens it again.

use std::time::Duration;

use crate::clock::Instant;

use crate::declaration::CircuitBreakerConfig;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CircuitState {
    Closed,
    Open,
    HalfOpen,
}

#[derive(Clone, Debug)]
pub struct CircuitBreaker {
    config: CircuitBreakerConfig,
    state: CircuitState,
    consecutive_failures: u32,
    trial_successes: u32,
    trial_in_flight: bool,
    opened_at: Option<Instant>,
}

impl CircuitBreaker {
    pub fn new(config: CircuitBreakerConfig) -> Self {
        Self { config, state: CircuitState::Closed, consecutive_failures: 0, trial_successes: 0, trial_in_flight: false, opened_at: None }
    }

    pub fn state(&self) -> CircuitState {
        self.state
    }

    /// Asks to let a call through at `now`. `false` means fail fast with `CIRCUIT_OPEN`.
    pub fn try_acquire(&mut self, now: Instant) -> bool {
        match self.state {
            CircuitState::Closed => true,
            CircuitState::Open => {
                let recovered = self
                    .opened_at
                    .is_some_and(|t| now.duration_since(t) >= Duration::from_millis(self.config.recovery_timeout_ms));
                if recovered {
                    self.state = CircuitState::HalfOpen;
                    self.trial_successes = 0;
                    self.trial_in_flight = true;
                }
                recovered
            }
            CircuitState::HalfOpen if self.trial_in_flight => false,
            CircuitState::HalfOpen => {
                self.trial_in_flight = true;
                true
            }
        }
    }

    pub fn on_success(&mut self) {
        match self.state {
            CircuitState::HalfOpen => {
                self.trial_in_flight = false;
                self.trial_successes += 1;
                if self.trial_successes >= self.config.success_threshold {
                    self.state = CircuitState::Closed;
                    self.consecutive_failures = 0;
                }
            }
            _ => self.consecutive_failures = 0,
        }
    }

    pub fn on_failure(&mut self, now: Instant) {
        match self.state {
            CircuitState::HalfOpen => self.open(now),
            CircuitState::Closed => {
                self.consecutive_failures += 1;
                if self.consecutive_failures >= self.config.failure_threshold {
                    self.open(now);
                }
            }
            CircuitState::Open => {}
        }
    }

    /// A let-through call ended without an outcome that says anything about the tool
    /// (it was cancelled): free the trial slot.
    pub fn on_abandoned(&mut self) {
        self.trial_in_flight = false;
    }

    fn open(&mut self, now: Instant) {
        self.state = CircuitState::Open;
        self.opened_at = Some(now);
        self.trial_in_flight = false;
        self.trial_successes = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn breaker() -> CircuitBreaker {
        CircuitBreaker::new(CircuitBreakerConfig { failure_threshold: 3, recovery_timeout_ms: 1_000, success_threshold: 2 })
    }

    #[tokio::test(start_paused = true)]
    async fn opens_half_opens_and_closes() {
        let mut b = breaker();
        for _ in 0..2 {
            assert!(b.try_acquire(Instant::now()));
            b.on_failure(Instant::now());
        }
        assert_eq!(b.state(), CircuitState::Closed);
        assert!(b.try_acquire(Instant::now()));
        b.on_failure(Instant::now());
        assert_eq!(b.state(), CircuitState::Open);
        assert!(!b.try_acquire(Instant::now()), "open circuit fails fast");

        tokio::time::advance(Duration::from_millis(999)).await;
        assert!(!b.try_acquire(Instant::now()), "still open before the recovery timeout");
        tokio::time::advance(Duration::from_millis(1)).await;
        assert!(b.try_acquire(Instant::now()), "one trial after the recovery timeout");
        assert_eq!(b.state(), CircuitState::HalfOpen);
        assert!(!b.try_acquire(Instant::now()), "only one trial at a time");
        b.on_success();
        assert_eq!(b.state(), CircuitState::HalfOpen, "needs two successful trials");
        assert!(b.try_acquire(Instant::now()));
        b.on_success();
        assert_eq!(b.state(), CircuitState::Closed);
    }

    #[tokio::test(start_paused = true)]
    async fn a_failed_trial_reopens() {
        let mut b = breaker();
        for _ in 0..3 {
            b.try_acquire(Instant::now());
            b.on_failure(Instant::now());
        }
        tokio::time::advance(Duration::from_secs(1)).await;
        assert!(b.try_acquire(Instant::now()));
        b.on_failure(Instant::now());
        assert_eq!(b.state(), CircuitState::Open);
        assert!(!b.try_acquire(Instant::now()));
        tokio::time::advance(Duration::from_secs(1)).await;
        assert!(b.try_acquire(Instant::now()));
    }

    #[test]
    fn a_success_resets_the_failure_count() {
        let mut b = breaker();
        let now = Instant::now();
        b.on_failure(now);
        b.on_failure(now);
        b.on_success();
        b.on_failure(now);
        b.on_failure(now);
        assert_eq!(b.state(), CircuitState::Closed);
    }
}
