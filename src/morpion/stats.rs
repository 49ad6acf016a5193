//! Each player's record: games won, lost and drawn, in total and over the last 50 games
//! (seed 000: "to follow its progress").

use std::collections::VecDeque;

/// How many recent games the record also summarises.
pub const RECENT_GAMES: usize = 50;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    Won,
    Lost,
    Drawn,
}

impl Outcome {
    /// The outcome for `side` of a game that `winner` won (`None`: a draw).
    pub fn for_side(winner: Option<crate::board::Stone>, side: crate::board::Stone) -> Outcome {
        match winner {
            None => Outcome::Drawn,
            Some(w) if w == side => Outcome::Won,
            Some(_) => Outcome::Lost,
        }
    }
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Record {
    pub won: u64,
    pub lost: u64,
    pub drawn: u64,
    recent: VecDeque<Outcome>,
}

/// Counts of won, lost and drawn games.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    pub won: u64,
    pub lost: u64,
    pub drawn: u64,
}

impl Record {
    pub fn add(&mut self, outcome: Outcome) {
        match outcome {
            Outcome::Won => self.won += 1,
            Outcome::Lost => self.lost += 1,
            Outcome::Drawn => self.drawn += 1,
        }
        if self.recent.len() == RECENT_GAMES {
            self.recent.pop_front();
        }
        self.recent.push_back(outcome);
    }

    pub fn games(&self) -> u64 {
        self.won + self.lost + self.drawn
    }

    pub fn total(&self) -> Tally {
        Tally {
            won: self.won,
            lost: self.lost,
            drawn: self.drawn,
        }
    }

    /// The tally of the last [`RECENT_GAMES`] games (fewer when fewer were played).
    pub fn recent(&self) -> Tally {
        let mut tally = Tally::default();
        for outcome in &self.recent {
            match outcome {
                Outcome::Won => tally.won += 1,
                Outcome::Lost => tally.lost += 1,
                Outcome::Drawn => tally.drawn += 1,
            }
        }
        tally
    }

    /// The record in the words of seed 000's program; the last-50 part appears once 50 games
    /// have been played, as there.
    pub fn describe(&self) -> String {
        let mut text = format!(
            "This player has won {} games, lost {} games and {} were draws.",
            self.won, self.lost, self.drawn
        );
        if self.games() >= RECENT_GAMES as u64 {
            let recent = self.recent();
            text.push_str(&format!(
                " Over the last {RECENT_GAMES} games, this player has won {} games, lost {} games and {} were draws.",
                recent.won, recent.lost, recent.drawn
            ));
        }
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recent_window_keeps_the_last_fifty() {
        let mut record = Record::default();
        for _ in 0..60 {
            record.add(Outcome::Lost);
        }
        for _ in 0..10 {
            record.add(Outcome::Drawn);
        }
        assert_eq!(record.total().lost, 60);
        assert_eq!(
            record.recent(),
            Tally {
                won: 0,
                lost: 40,
                drawn: 10
            }
        );
        assert!(record.describe().contains(
            "Over the last 50 games, this player has won 0 games, lost 40 games and 10 were draws."
        ));
    }
}
