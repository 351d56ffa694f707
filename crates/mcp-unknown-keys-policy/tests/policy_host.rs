//! `host` rules: the website a call's `url` names, read by a strict parser
//! that refuses every URL two readers could place on different hosts.

use crate::policy_support;

use mcp_unknown_keys_policy::PolicyLayer;
use mcp_unknown_keys_policy::{Answer, HostPattern, Rule, UrlProblem, url_host};
use policy_support::{Fate, Harness, rules};
use serde_json::{Value, json};

fn fetch(url: Value) -> Value {
    json!({ "url": url })
}

// --- The rule data ---

#[test]
fn host_patterns_are_a_host_or_a_subdomain_glob() {
    for good in [
        "docs.rs",
        "*.example.com",
        "localhost",
        "127.0.0.1",
        "::1",
        "a-b_c.d1",
        "Docs.RS",
    ] {
        assert!(HostPattern::new(good).is_ok(), "{good:?} was refused");
    }
    for bad in [
        "",
        "*",
        "*.",
        "*example.com",
        "a.*.com",
        "example.*",
        "https://example.com",
        "example.com:443",
        "example.com/path",
        "example.com.",
        ".example.com",
        "a..b",
        "exa mple.com",
        "ex%61mple.com",
        "*.::1",
        "[::1",
        "fe80::1%eth0",
        ":::",
        "bücher.de",
    ] {
        assert!(HostPattern::new(bad).is_err(), "{bad:?} was accepted");
        let json = json!({"tool": "web_fetch", "decision": "allow", "host": bad}).to_string();
        let error = serde_json::from_str::<Rule>(&json).unwrap_err().to_string();
        assert!(error.contains("host pattern"), "{error}");
    }
}

#[test]
fn a_glob_matches_below_its_host_on_a_dot_boundary_without_case() {
    let below = HostPattern::new("*.example.com").unwrap();
    assert!(below.matches("api.example.com"));
    assert!(below.matches("a.b.example.com"));
    assert!(below.matches("API.Example.COM"));
    assert!(!below.matches("example.com"), "the site itself is not below it");
    assert!(!below.matches("evilexample.com"), "the dot is the boundary");
    assert!(!below.matches("example.com.evil.test"));
    assert!(!below.matches(".example.com"));

    let exact = HostPattern::new("Docs.RS").unwrap();
    assert!(exact.matches("docs.rs"));
    assert!(!exact.matches("www.docs.rs"));
    assert!(!exact.matches("docs.rs.evil.test"));
}

// --- Reading a URL ---

#[test]
fn a_url_host_is_read_strictly() {
    let read = [
        ("https://docs.rs", "docs.rs"),
        ("http://docs.rs/a/b?c=d#e", "docs.rs"),
        ("HTTPS://Docs.RS:443/", "docs.rs"),
        ("https://docs.rs:/", "docs.rs"),
        ("https://docs.rs.", "docs.rs"),
        ("https://docs.rs?q=@evil.test", "docs.rs"),
        ("https://docs.rs#@evil.test", "docs.rs"),
        ("https://docs.rs/@evil.test", "docs.rs"),
        ("http://[::1]:8080/", "::1"),
        ("http://[FE80::1]/", "fe80::1"),
        ("http://[0:0::1]/", "::1"),
        ("http://[0000:0000:0000:0000:0000:0000:0000:0001]:80/", "::1"),
        ("http://[::ffff:127.0.0.1]/", "::ffff:127.0.0.1"),
        ("http://127.0.0.1:3000/", "127.0.0.1"),
        ("https://xn--bcher-kva.de/", "xn--bcher-kva.de"),
    ];
    for (url, host) in read {
        assert_eq!(url_host(url).as_deref(), Ok(host), "{url}");
    }
    let refused = [
        ("https://docs.rs@evil.test/", UrlProblem::Userinfo),
        ("https://user:pass@docs.rs/", UrlProblem::Userinfo),
        ("https://evil.test\\@docs.rs/", UrlProblem::Backslash),
        ("https:\\\\evil.test", UrlProblem::Backslash),
        ("https://ev%69l.test/", UrlProblem::Percent),
        ("https://docs.rs /", UrlProblem::Whitespace),
        ("https://docs.rs\t/", UrlProblem::Whitespace),
        ("https://docs.rs\u{a0}/", UrlProblem::Whitespace),
        ("https://do\ncs.rs/", UrlProblem::Whitespace),
        ("ftp://docs.rs/", UrlProblem::NotHttp),
        ("file:///etc/passwd", UrlProblem::NotHttp),
        ("javascript:alert(1)", UrlProblem::NotHttp),
        ("docs.rs/path", UrlProblem::NotHttp),
        ("//docs.rs/path", UrlProblem::NotHttp),
        ("https:docs.rs", UrlProblem::NotHttp),
        ("https:/docs.rs", UrlProblem::NotHttp),
        ("https:///docs.rs", UrlProblem::NoHost),
        ("https://", UrlProblem::NoHost),
        ("https://:80/", UrlProblem::NoHost),
        ("https://docs.rs:99999/", UrlProblem::Port),
        ("https://docs.rs:8o/", UrlProblem::Port),
        ("https://::1/", UrlProblem::Host),
        ("https://[docs.rs]/", UrlProblem::Host),
        ("https://[::1/", UrlProblem::Host),
        ("https://bücher.de/", UrlProblem::Host),
        ("https://a..b/", UrlProblem::Host),
        ("https://docs.rs../", UrlProblem::Host),
        ("http://2130706433/", UrlProblem::Address),
        ("http://0x7f.1/", UrlProblem::Address),
        ("http://127.1/", UrlProblem::Address),
        ("http://127.000.000.001/", UrlProblem::Address),
    ];
    for (url, problem) in refused {
        assert_eq!(url_host(url), Err(problem), "{url}");
    }
}

// --- Rules ---

const RULES: &str = r#"[
    {"tool": "web_fetch", "decision": "allow", "host": "*.docs.rs"},
    {"tool": "web_fetch", "decision": "allow", "host": "docs.rs"},
    {"tool": "web_fetch", "decision": "deny", "host": "evil.test"}
]"#;

#[tokio::test]
async fn host_rules_allow_deny_and_ask() {
    let harness = Harness::new(PolicyLayer::new(rules(RULES)));
    let cases = [
        ("https://docs.rs/serde", Fate::Allowed),
        ("https://api.docs.rs/x", Fate::Allowed),
        ("https://DOCS.rs/", Fate::Allowed),
        ("https://evil.test/", Fate::Denied),
        ("https://EVIL.test./x", Fate::Denied),
        ("https://docs.rs.evil.test/", Fate::Asked),
        ("https://example.com/", Fate::Asked),
    ];
    for (url, expected) in cases {
        assert_eq!(
            harness.fate("web_fetch", fetch(json!(url))).await,
            expected,
            "{url}"
        );
    }
}

#[tokio::test]
async fn an_exact_ipv6_rule_matches_every_spelling_of_its_address() {
    for pattern in ["::1", "[::1]", "0:0:0:0:0:0:0:1", "0000::0001"] {
        let json = format!(r#"[{{"tool": "web_fetch", "decision": "deny", "host": "{pattern}"}}]"#);
        let harness = Harness::new(PolicyLayer::new(rules(&json)));
        for url in [
            "http://[::1]/",
            "http://[0:0::1]:8080/x",
            "http://[0000:0000:0000:0000:0000:0000:0000:0001]/",
            // A zone id cannot be read: a deny rule about the tool fires.
            "http://[fe80::1%25eth0]/",
        ] {
            assert_eq!(
                harness.fate("web_fetch", fetch(json!(url))).await,
                Fate::Denied,
                "{pattern} against {url}"
            );
        }
        assert_eq!(
            harness.fate("web_fetch", fetch(json!("http://[::2]/"))).await,
            Fate::Asked,
            "{pattern}"
        );
    }
}

#[tokio::test]
async fn an_unreadable_url_fails_closed() {
    let harness = Harness::new(PolicyLayer::new(rules(RULES)));
    for url in [
        json!("https://docs.rs@evil.test/"),
        json!("https://evil.test\\@docs.rs/"),
        json!("https://%65vil.test/"),
        json!("docs.rs"),
        json!(42),
        json!({"href": "https://docs.rs/"}),
    ] {
        assert_eq!(
            harness.fate("web_fetch", fetch(url.clone())).await,
            Fate::Denied,
            "the deny rule let {url} through"
        );
    }
    let allow_only = Harness::new(PolicyLayer::new(rules(
        r#"[{"tool": "web_fetch", "decision": "allow", "host": "docs.rs"}]"#,
    )));
    assert_eq!(
        allow_only
            .fate("web_fetch", fetch(json!("https://docs.rs@evil.test/")))
            .await,
        Fate::Asked,
        "the allow rule took an unreadable URL"
    );
    let (_, told) = harness
        .run("web_fetch", fetch(json!("https://docs.rs@evil.test/")))
        .await;
    assert_eq!(
        told,
        "web_fetch was not run: the permission policy denies it (deny web_fetch host evil.test). Its `url` could not be checked (it carries a user name (`user@`)); a plain http(s) URL may be allowed."
    );
    let truncated = harness
        .fate("web_fetch", json!("{\"url\": \"https://docs.rs"))
        .await;
    assert_eq!(truncated, Fate::Denied, "arguments that are not an object");
}

#[tokio::test]
async fn an_allow_rule_must_cover_every_url_of_a_call() {
    let harness = Harness::new(PolicyLayer::new(rules(RULES)));
    let both = json!(["https://a.docs.rs/a", "https://api.docs.rs/b"]);
    assert_eq!(harness.fate("web_fetch", fetch(both)).await, Fate::Allowed);
    // As with paths, one rule must cover them all.
    let two_rules = json!(["https://docs.rs/a", "https://api.docs.rs/b"]);
    assert_eq!(harness.fate("web_fetch", fetch(two_rules)).await, Fate::Asked);
    let one_elsewhere = json!(["https://docs.rs/a", "https://example.com/"]);
    assert_eq!(harness.fate("web_fetch", fetch(one_elsewhere)).await, Fate::Asked);
    let one_evil = json!(["https://docs.rs/a", "https://evil.test/"]);
    assert_eq!(harness.fate("web_fetch", fetch(one_evil)).await, Fate::Denied);
}

#[tokio::test]
async fn a_call_that_names_no_url_is_not_about_a_host() {
    let harness = Harness::new(PolicyLayer::new(rules(
        r#"[{"tool": "web_*", "decision": "deny", "host": "evil.test"},
            {"tool": "web_*", "decision": "allow", "host": "docs.rs"},
            {"tool": "web_search", "decision": "allow"}]"#,
    )));
    assert_eq!(
        harness.fate("web_search", json!({"query": "evil.test"})).await,
        Fate::Allowed
    );
    assert_eq!(
        harness.fate("web_search", json!({"url": null})).await,
        Fate::Allowed
    );
    assert_eq!(
        harness.fate("web_fetch", json!({"query": "x"})).await,
        Fate::Asked,
        "allow needs a URL"
    );
}

#[tokio::test]
async fn host_and_under_must_both_hold() {
    let harness = Harness::new(PolicyLayer::new(rules(
        r#"[{"tool": "web_save", "decision": "allow", "host": "docs.rs", "under": "downloads"}]"#,
    )));
    let save = |url: &str, path: &str| json!({"url": url, "path": path});
    assert_eq!(
        harness
            .fate("web_save", save("https://docs.rs/", "downloads/a"))
            .await,
        Fate::Allowed
    );
    assert_eq!(
        harness.fate("web_save", save("https://docs.rs/", "src/a")).await,
        Fate::Asked
    );
    assert_eq!(
        harness
            .fate("web_save", save("https://x.test/", "downloads/a"))
            .await,
        Fate::Asked
    );
}

// --- Suggestions ---

#[tokio::test]
async fn always_allow_on_a_fetch_remembers_its_host() {
    let harness = Harness::answering(PolicyLayer::new(Vec::new()), Answer::AlwaysAllow(None));
    assert_eq!(
        harness
            .fate("web_fetch", fetch(json!("https://Docs.RS/serde")))
            .await,
        Fate::Asked
    );
    let question = harness.last_question();
    assert_eq!(question.urls[0].host.as_deref(), Some("docs.rs"));
    assert_eq!(question.to_string(), "web_fetch (c) url=https://Docs.RS/serde");
    assert_eq!(
        question.suggested_grant,
        Some(Rule::allow("web_fetch").unwrap().host("docs.rs").unwrap())
    );
    assert_eq!(
        harness
            .fate("web_fetch", fetch(json!("https://docs.rs/tokio")))
            .await,
        Fate::Allowed
    );
    assert_eq!(
        harness
            .fate("web_fetch", fetch(json!("https://crates.io/")))
            .await,
        Fate::Asked
    );
}

#[tokio::test]
async fn an_unreadable_or_mixed_url_suggests_the_tool_alone() {
    let harness = Harness::new(PolicyLayer::new(Vec::new()));
    for url in [
        json!("https://docs.rs@evil.test/"),
        json!(["https://docs.rs/", "https://crates.io/"]),
    ] {
        harness.fate("web_fetch", fetch(url)).await;
        assert_eq!(
            harness.last_question().suggested_grant,
            Some(Rule::allow("web_fetch").unwrap())
        );
    }
    harness
        .fate("web_fetch", json!({"url": "https://docs.rs/", "path": "notes/a"}))
        .await;
    assert_eq!(
        harness.last_question().suggested_grant,
        Some(Rule::allow("web_fetch").unwrap().under("notes").unwrap()),
        "a directory first"
    );
}
