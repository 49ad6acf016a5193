//! connect5: a Connect5 (exact-five gomoku) engine and server, a match runner, and the morpion
//! (tic-tac-toe) agents of the course material.

pub mod board;
pub mod engine;
pub mod gomocup;
pub mod http;
pub mod metrics;
pub mod morpion;
pub mod pool;
pub mod protocol;
pub mod referee;
pub mod server;
pub mod session;
