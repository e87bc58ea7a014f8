//! The layering of `src/`: every file may name only files of its own layer or of the layers
//! below it, so the modules import each other one way (as memchr's do: the generic code
//! never names an architecture, the dispatcher sits on top).
//!
//! The test reads every `src/**/*.rs`, blanks comments and literals, drops `#[cfg(test)]`
//! items (tests may reach anywhere), and resolves every `crate::…`, `super::…` and
//! child-module path to the file that defines the module (a name re-exported by `lib.rs`
//! resolves to the module it comes from). It fails naming the file and the path when a
//! file names a higher layer, or when a file belongs to no layer. Run it with
//! `--nocapture` to see the import graph; `scripts/layers.sh` prints a rougher one
//! without building anything.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;

/// The layers, lowest first. An entry ending in `/` is every file under that directory;
/// a file named exactly wins over its directory.
const LAYERS: &[(&str, &[&str])] = &[
    (
        "types: limits, errors, ids, kinds, responses",
        &["limits.rs", "error.rs", "kind.rs", "text.rs", "id.rs", "response.rs", "invalid.rs"],
    ),
    ("kernel primitives", &["simd/prefetch.rs", "simd/tables.rs", "simd/rand.rs"]),
    (
        "generic kernels: stage 1, skipper, string loop",
        &["simd/stage1.rs", "simd/skipper.rs", "simd/string.rs"],
    ),
    (
        "kernels every level may use: portable (SWAR), x86 helpers, the SSE2 baseline",
        &["simd/swar.rs", "simd/x86.rs", "simd/sse2.rs"],
    ),
    (
        "kernel levels",
        &[
            "simd/avx2.rs",
            "simd/avx2_utf8.rs",
            "simd/avx512.rs",
            "simd/avx512_utf8.rs",
            "simd/avx2_unescape.rs",
            "simd/avx512_unescape.rs",
            "simd/neon.rs",
            "simd/simd128.rs",
        ],
    ),
    ("kernel routing: levels as types", &["simd/level.rs", "simd/kernels.rs", "simd/mod.rs"]),
    (
        "JSON grammar, string decoding",
        &[
            "json/literal.rs",
            "json/number.rs",
            "json/string.rs",
            "json/utf8.rs",
            "json/unescape.rs",
        ],
    ),
    ("scan: exact walk, stage 2, decide", &["scan/"]),
    ("dispatch", &["dispatch/"]),
    ("message", &["message.rs"]),
    ("parser", &["parser.rs", "batch.rs"]),
    ("owned", &["owned.rs"]),
    ("streaming id recovery", &["recover.rs"]),
    (
        "API: frame, mcp, rewrite, pair, json::validate, lib",
        &["frame/", "mcp/", "rewrite.rs", "pair/", "json/mod.rs", "lib.rs"],
    ),
];

/// The layers of the engine crate, `rpcscan-traffic` (`traffic/src/`), lowest first: the
/// leaves, the inputs, what runs over them, the table of contents.
const ENGINE_LAYERS: Layers = &[
    ("leaves: JSON writing, globs, durations", &["json.rs", "glob.rs", "duration.rs"]),
    ("inputs: files, pipes, framings, log lines", &["input/"]),
    ("over the inputs: pairing, log records, policy", &["pair.rs", "log.rs", "policy.rs"]),
    ("table of contents", &["lib.rs"]),
];

/// Named layers, lowest first.
type Layers = &'static [(&'static str, &'static [&'static str])];

/// The layer of a file (path relative to its `src/`, with `/`) in `layers`.
fn layer_in(layers: Layers, file: &str) -> Option<usize> {
    let exact = layers.iter().position(|(_, files)| files.contains(&file));
    exact.or_else(|| {
        layers
            .iter()
            .position(|(_, files)| files.iter().any(|f| f.ends_with('/') && file.starts_with(f)))
    })
}

/// The files of each vector level. No level's file names another level's (outside tests):
/// what two levels share lives in a file of a lower layer, and `simd/kernels.rs` puts each
/// level together.
const LEVELS: &[&[&str]] = &[
    &["simd/avx2.rs", "simd/avx2_utf8.rs", "simd/avx2_unescape.rs"],
    &["simd/avx512.rs", "simd/avx512_utf8.rs", "simd/avx512_unescape.rs"],
    &["simd/neon.rs"],
    &["simd/simd128.rs"],
];

/// The source with comments, string and character literals blanked (newlines kept), so
/// that braces and paths in them are not seen.
fn code_only(src: &str) -> String {
    let c: Vec<char> = src.chars().collect();
    let mut out = String::with_capacity(src.len());
    let blank = |out: &mut String, ch: char| out.push(if ch == '\n' { '\n' } else { ' ' });
    let mut i = 0;
    while i < c.len() {
        let at = |k: usize| c.get(k).copied().unwrap_or('\0');
        let ident_before = i > 0 && (c[i - 1].is_alphanumeric() || c[i - 1] == '_');
        if at(i) == '/' && at(i + 1) == '/' {
            while i < c.len() && c[i] != '\n' {
                blank(&mut out, c[i]);
                i += 1;
            }
        } else if at(i) == '/' && at(i + 1) == '*' {
            let mut depth = 0;
            loop {
                if at(i) == '/' && at(i + 1) == '*' {
                    depth += 1;
                    out.push_str("  ");
                    i += 2;
                } else if at(i) == '*' && at(i + 1) == '/' {
                    depth -= 1;
                    out.push_str("  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else if i >= c.len() {
                    break;
                } else {
                    blank(&mut out, c[i]);
                    i += 1;
                }
            }
        } else if !ident_before && (at(i) == 'r' || (at(i) == 'b' && at(i + 1) == 'r')) && {
            let mut k = if at(i) == 'b' { i + 2 } else { i + 1 };
            while at(k) == '#' {
                k += 1;
            }
            at(k) == '"'
        } {
            // A raw string: r"…", r#"…"#, br#"…"#.
            let mut k = if at(i) == 'b' { i + 2 } else { i + 1 };
            let mut hashes = 0;
            while at(k) == '#' {
                hashes += 1;
                k += 1;
            }
            k += 1; // the opening quote
            loop {
                if k >= c.len() {
                    break;
                }
                if c[k] == '"' && (1..=hashes).all(|h| at(k + h) == '#') {
                    k += 1 + hashes;
                    break;
                }
                k += 1;
            }
            while i < k.min(c.len()) {
                blank(&mut out, c[i]);
                i += 1;
            }
        } else if at(i) == '"' {
            blank(&mut out, c[i]);
            i += 1;
            while i < c.len() && c[i] != '"' {
                if c[i] == '\\' {
                    blank(&mut out, c[i]);
                    i += 1;
                }
                if i < c.len() {
                    blank(&mut out, c[i]);
                    i += 1;
                }
            }
            if i < c.len() {
                blank(&mut out, c[i]);
                i += 1;
            }
        } else if at(i) == '\'' && (at(i + 1) == '\\' || at(i + 2) == '\'') {
            // A character literal ('x', '\n', '\'', '\u{7f}'); otherwise a lifetime.
            let mut k = i + 2;
            while k < c.len() && c[k] != '\'' {
                k += 1;
            }
            while i <= k.min(c.len() - 1) {
                blank(&mut out, c[i]);
                i += 1;
            }
        } else {
            out.push(c[i]);
            i += 1;
        }
    }
    out
}

/// `code` with every `#[cfg(test)]` item blanked: the attributes after it, then the item
/// up to its `;` or its closing brace.
fn without_test_items(code: &str) -> String {
    let mut c: Vec<char> = code.chars().collect();
    let marker: Vec<char> = "#[cfg(test)]".chars().collect();
    let mut i = 0;
    while i + marker.len() <= c.len() {
        if c[i..i + marker.len()] != marker[..] {
            i += 1;
            continue;
        }
        let start = i;
        let mut k = i + marker.len();
        let (mut paren, mut bracket, mut brace) = (0i32, 0i32, 0i32);
        while k < c.len() {
            match c[k] {
                '(' => paren += 1,
                ')' => paren -= 1,
                '[' => bracket += 1,
                ']' => bracket -= 1,
                '{' => brace += 1,
                '}' => {
                    brace -= 1;
                    if brace == 0 && paren == 0 && bracket == 0 {
                        break;
                    }
                }
                ';' if brace == 0 && paren == 0 && bracket == 0 => break,
                _ => {}
            }
            k += 1;
        }
        let end = (k + 1).min(c.len());
        for ch in c.iter_mut().take(end).skip(start) {
            if *ch != '\n' {
                *ch = ' ';
            }
        }
        i = k + 1;
    }
    c.into_iter().collect()
}

fn is_ident(ch: char) -> bool {
    ch.is_alphanumeric() || ch == '_'
}

/// The paths of a `use`-style tree starting at `i` (just after a `crate::`/`super::`/child
/// prefix): `a::b::C`, `a::{b, c::D}`, `{self, x}`. Each path is its segments.
fn path_tree(c: &[char], mut i: usize) -> Vec<Vec<String>> {
    let skip_ws = |i: &mut usize| {
        while *i < c.len() && c[*i].is_whitespace() {
            *i += 1;
        }
    };
    let mut prefix = Vec::new();
    loop {
        skip_ws(&mut i);
        if c.get(i) == Some(&'{') {
            let mut paths = Vec::new();
            i += 1;
            loop {
                skip_ws(&mut i);
                match c.get(i) {
                    None | Some('}') => break,
                    Some(',') => i += 1,
                    Some(_) => {
                        let start = i;
                        // Find the end of this element (a comma or brace at depth 0).
                        let mut depth = 0;
                        while let Some(&ch) = c.get(i) {
                            match ch {
                                '{' => depth += 1,
                                '}' if depth == 0 => break,
                                '}' => depth -= 1,
                                ',' if depth == 0 => break,
                                _ => {}
                            }
                            i += 1;
                        }
                        for sub in path_tree(&c[..i], start) {
                            let mut p = prefix.clone();
                            p.extend(sub);
                            paths.push(p);
                        }
                    }
                }
            }
            return paths;
        }
        let start = i;
        while i < c.len() && is_ident(c[i]) {
            i += 1;
        }
        if start == i {
            return vec![prefix];
        }
        prefix.push(c[start..i].iter().collect());
        if c.get(i) == Some(&':') && c.get(i + 1) == Some(&':') {
            i += 2;
        } else {
            return vec![prefix];
        }
    }
}

/// The module path of a file: `scan/envelope.rs` is `[scan, envelope]`, `scan/mod.rs` is
/// `[scan]`, `lib.rs` is `[]`.
fn module_of(file: &str) -> Vec<String> {
    if file == "lib.rs" {
        return Vec::new();
    }
    let stem = file.strip_suffix(".rs").unwrap_or(file);
    let stem = stem.strip_suffix("/mod").unwrap_or(stem);
    stem.split('/').map(str::to_owned).collect()
}

/// The file that defines a module, if it exists.
fn file_of(module: &[String], files: &BTreeSet<String>) -> Option<String> {
    if module.is_empty() {
        return Some("lib.rs".to_owned());
    }
    let joined = module.join("/");
    [format!("{joined}.rs"), format!("{joined}/mod.rs")].into_iter().find(|f| files.contains(f))
}

/// Resolves a path given from module `base` to the file of the deepest module it names.
fn resolve(
    base: Vec<String>,
    path: &[String],
    files: &BTreeSet<String>,
    reexports: &BTreeMap<String, String>,
) -> Option<String> {
    let mut module = base;
    for seg in path {
        if seg == "self" {
            continue;
        }
        let mut deeper = module.clone();
        deeper.push(seg.clone());
        if file_of(&deeper, files).is_some() {
            module = deeper;
        } else {
            if module.is_empty() {
                // A name `lib.rs` re-exports: the module it comes from.
                if let Some(file) = reexports.get(seg) {
                    return Some(file.clone());
                }
            }
            break;
        }
    }
    file_of(&module, files)
}

/// The names `lib.rs` re-exports (`pub use module::{A, B};`), mapped to their files.
fn lib_reexports(lib: &str, files: &BTreeSet<String>) -> BTreeMap<String, String> {
    let code = code_only(lib);
    let c: Vec<char> = code.chars().collect();
    let mut map = BTreeMap::new();
    for (at, _) in code.match_indices("pub use ") {
        for path in path_tree(&c, at + "pub use ".len()) {
            if let Some((name, module)) = path.split_last() {
                if let Some(file) = resolve(Vec::new(), module, files, &BTreeMap::new()) {
                    map.insert(name.clone(), file);
                }
            }
        }
    }
    map
}

/// Every file under `dir`, relative to `root`, with `/`.
fn rust_files(root: &Path, dir: &Path, out: &mut BTreeSet<String>) {
    for entry in fs::read_dir(dir).expect("read src/") {
        let path = entry.expect("dir entry").path();
        if path.is_dir() {
            rust_files(root, &path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let rel = path.strip_prefix(root).expect("under src/");
            out.insert(rel.to_string_lossy().replace('\\', "/"));
        }
    }
}

/// For each file: the files it names (outside `#[cfg(test)]` items), with the path text.
fn import_graph(src: &Path) -> BTreeMap<String, BTreeMap<String, BTreeSet<String>>> {
    let mut files = BTreeSet::new();
    rust_files(src, src, &mut files);
    let lib = fs::read_to_string(src.join("lib.rs")).expect("read lib.rs");
    let reexports = lib_reexports(&lib, &files);
    let mut graph = BTreeMap::new();
    for file in &files {
        let text = fs::read_to_string(src.join(file)).expect("read source");
        let code = without_test_items(&code_only(&text));
        let c: Vec<char> = code.chars().collect();
        let here = module_of(file);
        // Child modules declared in this file (`mod name;`).
        let children: BTreeSet<String> = code
            .match_indices("mod ")
            .filter(|(at, _)| *at == 0 || !is_ident(c[at - 1]))
            .filter_map(|(at, _)| {
                let rest: String = c[at + 4..].iter().take_while(|ch| **ch != '\n').collect();
                let name: String = rest.chars().take_while(|ch| is_ident(*ch)).collect();
                rest[name.len()..].trim_start().starts_with(';').then_some(name)
            })
            .collect();
        let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        let mut i = 0;
        while i < c.len() {
            let boundary = i == 0 || !(is_ident(c[i - 1]) || c[i - 1] == ':' || c[i - 1] == '$');
            if !boundary || !is_ident(c[i]) {
                i += 1;
                continue;
            }
            let word_end = (i..c.len()).find(|&k| !is_ident(c[k])).unwrap_or(c.len());
            let word: String = c[i..word_end].iter().collect();
            let is_path = c.get(word_end) == Some(&':') && c.get(word_end + 1) == Some(&':');
            if !is_path {
                i = word_end;
                continue;
            }
            let (base, rest) = match word.as_str() {
                "crate" => (Vec::new(), word_end + 2),
                "super" => {
                    let mut base = here.clone();
                    let mut k = word_end + 2;
                    base.pop();
                    while c[k..].starts_with(&['s', 'u', 'p', 'e', 'r', ':', ':']) {
                        base.pop();
                        k += 7;
                    }
                    (base, k)
                }
                w if children.contains(w) => {
                    let mut base = here.clone();
                    base.push(w.to_owned());
                    (base, word_end + 2)
                }
                _ => {
                    i = word_end;
                    continue;
                }
            };
            for path in path_tree(&c, rest) {
                if let Some(target) = resolve(base.clone(), &path, &files, &reexports) {
                    if &target != file {
                        let text = format!("{word}::{}", path.join("::"));
                        edges.entry(target).or_default().insert(text);
                    }
                }
            }
            i = word_end;
        }
        graph.insert(file.clone(), edges);
    }
    graph
}

#[test]
fn lower_layers_never_name_higher_ones() {
    check_layers(LAYERS, "src");
}

/// The engine crate's modules, one way too.
#[test]
fn engine_layers_never_name_higher_ones() {
    check_layers(ENGINE_LAYERS, "traffic/src");
}

/// Fails naming every import of a higher layer (or file of no layer) under `dir`.
fn check_layers(layers: Layers, dir: &str) {
    let layer_of = |file: &str| layer_in(layers, file);
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
    let graph = import_graph(&src);
    let mut problems = Vec::new();
    println!("{dir}: module import graph (layer: file -> files it names), lowest layer first:");
    for (layer, (name, _)) in layers.iter().enumerate() {
        println!("{layer} {name}");
        for (file, edges) in graph.iter().filter(|(f, _)| layer_of(f) == Some(layer)) {
            let targets: Vec<String> = edges
                .keys()
                .map(|t| format!("{t} ({})", layer_of(t).map_or("?".into(), |l| l.to_string())))
                .collect();
            println!("    {file} -> {}", targets.join(", "));
        }
    }
    for (file, edges) in &graph {
        let Some(from) = layer_of(file) else {
            problems.push(format!("{file} belongs to no layer (add it to the layers)"));
            continue;
        };
        for (target, paths) in edges {
            let to = layer_of(target).unwrap_or(usize::MAX);
            if to > from {
                for path in paths {
                    problems.push(format!(
                        "{file} (layer {from}, {}) names {path}, in {target} (layer {to}, {})",
                        layers[from].0,
                        layers.get(to).map_or("no layer", |l| l.0)
                    ));
                }
            }
        }
    }
    assert!(problems.is_empty(), "imports against the layering:\n{}", problems.join("\n"));
}

#[test]
fn no_level_names_another() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let graph = import_graph(&src);
    let level_of = |file: &str| LEVELS.iter().position(|files| files.contains(&file));
    let mut problems = Vec::new();
    for (file, edges) in &graph {
        let Some(from) = level_of(file) else { continue };
        for (target, paths) in edges {
            if level_of(target).is_some_and(|to| to != from) {
                problems.push(format!("{file} names {paths:?}, in {target}"));
            }
        }
    }
    assert!(problems.is_empty(), "kernel levels naming each other:\n{}", problems.join("\n"));
}

/// The checker itself: literals, comments and test items are not imports; brace groups,
/// `super::super::`, child modules and `lib.rs` re-exports are resolved.
#[test]
fn the_checker_sees_what_it_should() {
    let code = without_test_items(&code_only(
        "use crate::a::{b, c::D}; // crate::x::y\n/// [`crate::z`]\nlet s = \"crate::q::r\"; let r = r#\"crate::w\"#; let ch = '{';\n#[cfg(test)]\nmod tests { use crate::t::u; fn f() { let _ = [0u8; 4]; } }\nfn g() -> [u8; 2] { super::super::k::m() }",
    ));
    assert!(!code.contains("crate::x") && !code.contains("crate::z") && !code.contains("crate::q"));
    assert!(!code.contains("crate::w") && !code.contains("crate::t"));
    assert!(code.contains("super::super::k::m"));
    let c: Vec<char> = "{b, c::{self, D}, e::F}".chars().collect();
    let paths = path_tree(&c, 0);
    let want: Vec<Vec<String>> = [&["b"][..], &["c", "self"], &["c", "D"], &["e", "F"]]
        .iter()
        .map(|p| p.iter().map(|s| s.to_string()).collect())
        .collect();
    assert_eq!(paths, want);
    let files: BTreeSet<String> =
        ["lib.rs", "id.rs", "scan/mod.rs", "scan/skip.rs"].iter().map(|s| s.to_string()).collect();
    let reexports = BTreeMap::from([("Id".to_owned(), "id.rs".to_owned())]);
    let seg = |p: &[&str]| p.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert_eq!(
        resolve(vec![], &seg(&["scan", "skip", "value"]), &files, &reexports).as_deref(),
        Some("scan/skip.rs")
    );
    assert_eq!(
        resolve(vec![], &seg(&["scan", "ws"]), &files, &reexports).as_deref(),
        Some("scan/mod.rs")
    );
    assert_eq!(resolve(vec![], &seg(&["Id"]), &files, &reexports).as_deref(), Some("id.rs"));
}

/// The crates, one way: the library ← the engine (`rpcscan-traffic`) ← the products. The
/// engine names no product and none of the products' own dependencies (argument parsing,
/// HTTP, async runtimes, signals, Python); a product never names another product (the tower
/// layer is a library the CLI's gateway uses, and names neither the CLI nor the engine). The
/// manifests of `datafusion/` and `python/` are read as text (they are workspaces of their
/// own).
#[test]
fn crates_depend_one_way() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    // `rpcscan-datafusion` is a library of SQL functions (the Python package ships them for
    // DataFusion for Python); the SQL shell and cluster are `rpcscan-ballista`.
    let products = ["rpcscan-cli", "rpcscan-python", "rpcscan-ballista"];
    #[rustfmt::skip]
    let rules: &[(&str, &[&str])] = &[
        ("Cargo.toml", &["rpcscan-traffic", "rpcscan-tower"]),
        ("traffic/Cargo.toml", &["clap", "hyper", "tokio", "nix", "pyo3", "rpcscan-tower", "datafusion"]),
        ("tower/Cargo.toml", &["rpcscan-traffic"]),
        ("cli/Cargo.toml", &[]),
        ("python/Cargo.toml", &["clap", "hyper", "tokio", "nix", "indicatif", "rpcscan-tower"]),
        ("datafusion/Cargo.toml", &[]),
    ];
    let mut problems = Vec::new();
    for (manifest, banned) in rules {
        let text = fs::read_to_string(root.join(manifest)).expect("read manifest");
        let deps = dependencies(&text);
        let name = text
            .lines()
            .find_map(|l| l.strip_prefix("name = \""))
            .and_then(|l| l.strip_suffix('"'))
            .expect("package name");
        for dep in &deps {
            let product = products.contains(&dep.as_str()) && dep != name;
            if product || banned.contains(&dep.as_str()) {
                problems.push(format!("{manifest} depends on {dep}"));
            }
        }
    }
    assert!(
        problems.is_empty(),
        "crate dependencies against the layering:\n{}",
        problems.join("\n")
    );
}

/// The names in a manifest's `[dependencies]` table (not dev- or build-dependencies).
fn dependencies(manifest: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut inside = false;
    for line in manifest.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            inside = line == "[dependencies]";
            continue;
        }
        if inside && !line.starts_with('#') {
            if let Some((name, _)) = line.split_once('=') {
                out.push(name.trim().to_owned());
            }
        }
    }
    out
}
