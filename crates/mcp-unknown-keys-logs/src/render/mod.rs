//! A [`Report`](crate::Report) written for people and for the tools they
//! look in: the readable text report ([`text`], which ends with the rates
//! `--by` asks for), one self-contained HTML page ([`html`]), GitHub-flavoured
//! Markdown for a CI step summary ([`markdown`]), SARIF 2.1.0 for code
//! scanning ([`sarif`]) and JUnit XML for test dashboards ([`junit`]); and
//! the strict-readiness preview in text, JSON or HTML ([`strict`]). Each
//! writes to any `io::Write`; none prints on its own. The `audit`
//! command's `--format` values are these.

pub mod html;
pub mod junit;
pub mod markdown;
mod rates;
pub mod sarif;
mod sites;
pub mod strict;
pub mod text;
