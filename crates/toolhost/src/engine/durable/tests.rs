//! Paused-clock tests of journaled executions: the journal is played by the test.
