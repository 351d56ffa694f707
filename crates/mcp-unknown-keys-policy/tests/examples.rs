//! The examples run, and say what their comments promise.

#[path = "../examples/synopsis.rs"]
mod synopsis;

#[test]
fn the_synopsis_asks_about_the_write_and_warns_once_about_the_read() {
    let log = synopsis::synopsis().unwrap();
    assert_eq!(log.len(), 2, "{log:?}");
    assert!(log[0].starts_with("asked: fs_write (call_2)"), "{log:?}");
    assert!(
        log[0].contains("record it"),
        "the human sees the model's reason: {log:?}"
    );
    assert_eq!(
        log[1],
        "fs_read was called with undeclared argument(s): ffset, the rest"
    );
}
