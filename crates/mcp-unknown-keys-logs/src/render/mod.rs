//! A [`Report`](crate::Report) written for people: the readable text report
//! ([`text`], which ends with the rates `--by` asks for) and one
//! self-contained HTML page ([`html`]). Both write to any `io::Write`;
//! neither prints on its own. The `audit` command's `--format text` and
//! `--format html` are these.

pub mod html;
mod rates;
pub mod text;
