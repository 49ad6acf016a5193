//! The Gomocup (pbrain) protocol, brain side: what a brain answers to each of a manager's lines
//! ([`Brain`]), without reading, writing or searching; `connect5 gomocup` (the binary's
//! `gomocup_command`) drives it over stdin/stdout. `docs/gomocup.md` is the contract.

mod brain;
pub(crate) mod command;

pub use brain::{Brain, BrainConfig, Step, Think};
