//! Links the addon as Node expects on each platform (on macOS, N-API's
//! symbols are left for the loading process to provide).

fn main() {
    napi_build::setup();
}
