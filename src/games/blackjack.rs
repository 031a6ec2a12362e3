//! Blackjack as in Sutton & Barto, Example 5.3 (written by the tabular baselines work).
