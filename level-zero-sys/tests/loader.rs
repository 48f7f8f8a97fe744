//! Opening the loader: every symbol resolves where `libze1` is installed, and each way of
//! failing names the library or the symbol, in the dynamic linker's words.

use level_zero_sys::{LoadError, Loader, LOADER_NAMES};

#[test]
fn installed_loader_resolves_every_symbol_or_names_the_library() {
    match Loader::open() {
        Ok(loader) => {
            println!(
                "{} resolved {} symbols",
                loader.library,
                Loader::SYMBOLS.len()
            );
            assert!(LOADER_NAMES.contains(&loader.library.as_str()));
        }
        Err(LoadError::Library { tried }) => {
            println!("no loader installed: {tried:?}");
            assert_eq!(tried.len(), LOADER_NAMES.len());
            for (name, reason) in &tried {
                assert!(
                    reason.contains(name.as_str()),
                    "`{reason}` does not name {name}"
                );
            }
        }
        Err(other) => panic!("the installed loader lacks a symbol: {other}"),
    }
}

#[test]
fn missing_library_is_named() {
    let path = "/nonexistent/libze_loader.so.1";
    let error = Loader::open_path(path).unwrap_err();
    println!("{error}");
    assert!(matches!(&error, LoadError::Library { tried } if tried[0].0 == path));
    assert!(error.to_string().contains(path), "{error}");
}

#[cfg(target_os = "linux")]
#[test]
fn library_without_level_zero_names_the_first_missing_symbol() {
    let error = Loader::open_path("libc.so.6").unwrap_err();
    println!("{error}");
    match error {
        LoadError::Symbol {
            library,
            symbol,
            reason,
        } => {
            assert_eq!(library, "libc.so.6");
            assert_eq!(symbol, Loader::SYMBOLS[0]);
            assert!(reason.contains("zeInit"), "{reason}");
        }
        other => panic!("expected a missing symbol, got {other:?}"),
    }
}
