//! How the votes of several verifiers make one V, the one rule for a panel stage and the
//! audit's ensembles: a tie, or a missing vote where every vote is needed, leaves the memory
//! unscored (it is then not flagged), never decided by list order.

use serde::{Deserialize, Serialize};

/// How votes are combined.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Rule {
    /// Mean V.
    Mean,
    /// More yes than no among all votes.
    Majority,
    /// More than half of all named judges.
    Strict,
}

/// The panel's V from the votes (None: missing), by `rule`.
pub fn combine(rule: Rule, votes: &[Option<f64>]) -> Option<f64> {
    let cast: Vec<f64> = votes.iter().flatten().copied().collect();
    let missing = cast.len() < votes.len();
    let yes = cast.iter().filter(|v| **v >= 0.5).count();
    let no = cast.len() - yes;
    match rule {
        Rule::Mean => (!missing && !cast.is_empty()).then(|| cast.iter().sum::<f64>() / cast.len() as f64),
        Rule::Majority if missing || yes == no => None,
        Rule::Majority => Some(if yes > no { 1.0 } else { 0.0 }),
        Rule::Strict => {
            let half = votes.len() as f64 / 2.0;
            if yes as f64 > half {
                Some(1.0)
            } else if no as f64 > half {
                Some(0.0)
            } else {
                None
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ties_and_missing_votes_are_unscored_never_decided_by_order() {
        let (y, n) = (Some(1.0), Some(0.0));
        assert_eq!(combine(Rule::Majority, &[y, n]), None);
        assert_eq!(combine(Rule::Majority, &[n, y]), None);
        assert_eq!(combine(Rule::Majority, &[y, y, None]), None);
        assert_eq!(combine(Rule::Majority, &[y, n, y]), Some(1.0));
        assert_eq!(combine(Rule::Mean, &[y, None]), None);
        assert_eq!(combine(Rule::Mean, &[y, n, y, y]), Some(0.75));
        // Strict: two of three is over half even with the third missing; one of three is not.
        assert_eq!(combine(Rule::Strict, &[y, y, None]), Some(1.0));
        assert_eq!(combine(Rule::Strict, &[y, n, None]), None);
        assert_eq!(combine(Rule::Strict, &[n, n, y]), Some(0.0));
        assert_eq!(combine(Rule::Strict, &[y, n]), None);
    }
}
