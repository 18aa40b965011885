//! The chaos suite's tools: own service instances to kill, a TCP proxy to cut, and the ledger
//! every case settles with.

#![allow(dead_code)] // each case uses its own part

pub mod ledger;
pub mod proxy;
pub mod run;
pub mod services;
