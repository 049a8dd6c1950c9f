//! The declarations of this crate cannot drift from include/outlive.h: this
//! test parses the header's `OUTLIVE_API` prototypes and callback typedefs,
//! translates their C types into the Rust types the crate's mapping gives
//! them, and compares each with the declaration in src/lib.rs; then it
//! compiles a C program against the header that prints every struct's size and
//! field offsets and every constant's value, and compares them with Rust's.
use std::collections::BTreeMap;
use std::process::Command;

const LIB_RS: &str = include_str!("../src/lib.rs");

fn header() -> String {
    let path = format!("{}/outlive.h", env!("OUTLIVE_INCLUDE_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn strip_comments(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(start) = rest.find("/*") {
        out.push_str(&rest[..start]);
        let end = rest[start..].find("*/").expect("unterminated comment") + start + 2;
        out.push(' ');
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

/// Splits on commas outside parentheses and angle brackets.
fn split_top(text: &str) -> Vec<String> {
    let (mut out, mut depth, mut current) = (Vec::new(), 0i32, String::new());
    for c in text.chars() {
        match c {
            '(' | '<' => depth += 1,
            ')' | '>' => depth -= 1,
            _ => {}
        }
        if c == ',' && depth == 0 {
            out.push(std::mem::take(&mut current));
        } else {
            current.push(c);
        }
    }
    out.push(current);
    out.into_iter().map(|s| s.trim().to_string()).filter(|s| !s.is_empty()).collect()
}

fn tokens(c: &str) -> Vec<String> {
    let spaced = c.replace('*', " * ").replace('(', " ( ").replace(')', " ) ").replace('[', " [ ").replace(']', " ] ");
    spaced.split_whitespace().map(str::to_string).collect()
}

/// A C parameter ("const char *name", "char out_id[OUTLIVE_ID_SIZE]",
/// "void (*release)(void *context)") without its name.
fn drop_name(param: &str) -> String {
    let t = tokens(param);
    if let Some(i) = t.iter().position(|s| s == "(") {
        // A function pointer: type ( * name ) ( params )
        if t.get(i + 1).map(String::as_str) == Some("*") && t.get(i + 3).map(String::as_str) == Some(")") {
            let mut t = t.clone();
            t.remove(i + 2);
            return t.join(" ");
        }
    }
    if let Some(i) = t.iter().position(|s| s == "[") {
        // An array parameter is a pointer.
        return format!("{} *", t[..i - 1].join(" "));
    }
    if t.len() >= 2 && t.last().unwrap().chars().all(|c| c.is_alphanumeric() || c == '_') && t[t.len() - 2] != "const"
        || t.len() >= 2 && t[t.len() - 2] == "*"
    {
        return t[..t.len() - 1].join(" ");
    }
    t.join(" ")
}

/// The Rust type the crate's mapping gives a C type (without a name).
fn rust_type(c: &str) -> String {
    let t = tokens(c);
    if let Some(i) = t.iter().position(|s| s == "(") {
        // ret ( * ) ( params )
        let ret = rust_type(&t[..i].join(" "));
        let inner = t[i + 4..t.len() - 1].join(" ");
        let params: Vec<String> = if inner.trim() == "void" {
            vec![]
        } else {
            split_top(&inner).iter().map(|p| rust_type(&drop_name(p))).collect()
        };
        let ret = if ret == "()" { String::new() } else { format!("->{ret}") };
        return format!("Option<unsafe extern \"C\" fn({}){ret}>", params.join(","));
    }
    let mut base = None;
    let mut leading_const = false;
    let mut pointers: Vec<bool> = Vec::new(); // one per '*': is the pointee const
    let mut pending_const = false;
    for token in &t {
        match token.as_str() {
            "const" if base.is_none() => leading_const = true,
            "const" => pending_const = true,
            "*" => {
                let pointee_const = if pointers.is_empty() { leading_const } else { pending_const };
                pending_const = false;
                pointers.push(pointee_const);
            }
            other => base = Some(other.to_string()),
        }
    }
    let base = base.expect("a type");
    let mut out = match base.as_str() {
        "void" if !pointers.is_empty() => "c_void".to_string(),
        "void" => "()".to_string(),
        "char" => "c_char".into(),
        "size_t" => "usize".into(),
        "uint32_t" => "u32".into(),
        "int32_t" => "i32".into(),
        "int64_t" => "i64".into(),
        "uint64_t" => "u64".into(),
        "int" => "c_int".into(),
        "double" => "f64".into(),
        "bool" => "bool".into(),
        name => name.to_string(),
    };
    for pointee_const in pointers {
        out = format!("{}{out}", if pointee_const { "*const " } else { "*mut " });
    }
    out
}

fn squeeze(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join("").replace(",)", ")").replace(",>", ">")
}

/// Removes `name:` parameter labels from a Rust function pointer type.
fn unlabel(rust: &str) -> String {
    let mut out = String::new();
    let chars: Vec<char> = rust.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_alphabetic() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            let word: String = chars[start..i].iter().collect();
            let mut j = i;
            while j < chars.len() && chars[j] == ' ' {
                j += 1;
            }
            let is_label = j < chars.len() && chars[j] == ':' && chars.get(j + 1) != Some(&':');
            if is_label {
                i = j + 1;
            } else {
                out.push_str(&word);
            }
        } else {
            out.push(c);
            i += 1;
        }
    }
    squeeze(&out)
}

/// name -> (parameter types, return type), from the header.
fn header_functions() -> BTreeMap<String, (Vec<String>, String)> {
    let text = strip_comments(&header());
    let mut out = BTreeMap::new();
    for piece in text.split("OUTLIVE_API").skip(1) {
        let decl = piece.split(';').next().unwrap();
        if decl.contains('#') {
            continue; // the macro's own definition
        }
        let decl = decl.split_whitespace().collect::<Vec<_>>().join(" ");
        let open = decl.find('(').unwrap();
        let head = &decl[..open];
        let name_start = head.rfind(|c: char| !(c.is_alphanumeric() || c == '_')).map_or(0, |i| i + 1);
        let (ret, name) = (head[..name_start].trim(), head[name_start..].trim());
        let params = &decl[open + 1..decl.rfind(')').unwrap()];
        let params: Vec<String> = if params.trim() == "void" {
            vec![]
        } else {
            split_top(params).iter().map(|p| squeeze(&rust_type(&drop_name(p)))).collect()
        };
        out.insert(name.to_string(), (params, squeeze(&rust_type(ret))));
    }
    out
}

/// name -> (parameter types, return type), from src/lib.rs's extern block.
fn rust_functions() -> BTreeMap<String, (Vec<String>, String)> {
    let block = &LIB_RS[LIB_RS.find("extern \"C\" {").expect("an extern block")..];
    let mut out = BTreeMap::new();
    for decl in block.split("pub fn ").skip(1) {
        let decl = decl.split(';').next().unwrap();
        let open = decl.find('(').unwrap();
        let name = decl[..open].trim().to_string();
        // The parameter list ends at the parenthesis that closes `open`.
        let mut depth = 0;
        let mut close = open;
        for (i, c) in decl.char_indices().skip(open) {
            match c {
                '(' => depth += 1,
                ')' => {
                    depth -= 1;
                    if depth == 0 {
                        close = i;
                        break;
                    }
                }
                _ => {}
            }
        }
        let params = split_top(&decl[open + 1..close])
            .iter()
            .map(|p| squeeze(p.split_once(':').expect("name: type").1))
            .collect();
        let ret = decl[close + 1..].trim().trim_start_matches("->").trim();
        out.insert(name, (params, if ret.is_empty() { "()".into() } else { squeeze(ret) }));
    }
    out
}

#[test]
fn every_header_function_is_declared_with_the_same_types() {
    let header = header_functions();
    let rust = rust_functions();
    assert!(header.len() > 150, "the header parser found only {} functions", header.len());
    let skipped: BTreeMap<_, _> = outlive_sys::SKIPPED_FUNCTIONS.iter().cloned().collect();
    let mut problems = Vec::new();
    for (name, (params, ret)) in &header {
        match rust.get(name) {
            None if skipped.contains_key(name.as_str()) => {}
            None => problems.push(format!("{name}: in the header, not declared (nor in SKIPPED_FUNCTIONS)")),
            Some((rust_params, rust_ret)) => {
                if rust_params != params {
                    problems.push(format!("{name}: parameters {rust_params:?}, the header's are {params:?}"));
                }
                if rust_ret != ret {
                    problems.push(format!("{name}: returns {rust_ret}, the header's returns {ret}"));
                }
            }
        }
    }
    for name in rust.keys() {
        if !header.contains_key(name) {
            problems.push(format!("{name}: declared, but not in the header"));
        }
    }
    for (name, reason) in &skipped {
        if reason.trim().is_empty() || !header.contains_key(*name) {
            problems.push(format!("{name}: skipped without a reason, or not in the header"));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn every_callback_typedef_has_the_same_signature() {
    let text = strip_comments(&header());
    let mut checked = 0;
    for piece in text.split("typedef ").skip(1) {
        let decl = piece.split(';').next().unwrap().split_whitespace().collect::<Vec<_>>().join(" ");
        let Some(star) = decl.find("(*") else { continue };
        let name_end = decl[star..].find(')').unwrap() + star;
        let name = decl[star + 2..name_end].trim();
        let c_type = format!("{}(*){}", &decl[..star], &decl[name_end + 1..]);
        let expected = squeeze(&rust_type(&c_type));
        let marker = format!("pub type {name} =");
        let start = LIB_RS.find(&marker).unwrap_or_else(|| panic!("{name}: no `pub type` in src/lib.rs"));
        let rust = LIB_RS[start + marker.len()..].split(';').next().unwrap();
        assert_eq!(unlabel(rust), expected, "{name}");
        checked += 1;
    }
    assert!(checked >= 10, "only {checked} callback typedefs found");
}

/// Compiles and runs a C program against the header; returns its output lines
/// as name -> value.
fn c_values(label: &str, body: &str) -> BTreeMap<String, String> {
    // Tests run in parallel: a directory per program.
    let dir = std::env::temp_dir().join(format!("outlive-sys-{label}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let source = dir.join("values.c");
    let program = format!(
        "#include <stdio.h>\n#include <stddef.h>\n#include \"outlive.h\"\nint main(void) {{\n{body}\nreturn 0;\n}}\n"
    );
    std::fs::write(&source, program).unwrap();
    let binary = dir.join("values");
    let built = Command::new("cc")
        .args(["-std=c99", "-Wall", "-Werror", "-o"])
        .arg(&binary)
        .arg(&source)
        .arg(format!("-I{}", env!("OUTLIVE_INCLUDE_DIR")))
        .output()
        .expect("cc runs");
    assert!(built.status.success(), "{}", String::from_utf8_lossy(&built.stderr));
    let output = Command::new(&binary).output().unwrap();
    std::fs::remove_dir_all(&dir).ok();
    String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(|line| {
            let (name, value) = line.split_once(' ').unwrap();
            (name.to_string(), value.to_string())
        })
        .collect()
}

macro_rules! layouts {
    ($($ty:ident { $($field:ident),* }),* $(,)?) => {{
        let mut c = String::new();
        let mut rust = BTreeMap::new();
        $(
            c.push_str(&format!("printf(\"{0} %zu\\n\", sizeof({0}));\n", stringify!($ty)));
            rust.insert(stringify!($ty).to_string(), std::mem::size_of::<outlive_sys::$ty>().to_string());
            $(
                c.push_str(&format!("printf(\"{0}.{1} %zu\\n\", offsetof({0}, {1}));\n", stringify!($ty), stringify!($field)));
                rust.insert(format!("{}.{}", stringify!($ty), stringify!($field)),
                            std::mem::offset_of!(outlive_sys::$ty, $field).to_string());
            )*
        )*
        (c, rust)
    }};
}

#[test]
fn every_struct_has_the_size_and_field_offsets_of_the_header() {
    let (program, rust) = layouts!(
        outlive_store_options { version, durability, busy_timeout_ms, liveness_seconds },
        outlive_handler_descriptor { magic, version, reserved, name, signature, function, resolver },
        outlive_task_spec { version, work, group_start, group_members, group_member_count },
        outlive_task_options {
            version,
            queue,
            priority,
            due_at,
            delay_seconds,
            unique_key,
            result_signal,
            group_start,
            group_members,
            group_member_count,
            result_consumer,
            result_delivery,
            result_lifetime,
            result_scope
        },
        outlive_task_policy { version, initial_backoff, max_backoff, max_attempts, timeout, max_age },
        outlive_schedule_period { version, interval_seconds, cron },
        outlive_presenter { version, priority, present, end },
    );
    // Every public struct of the header is in the list above.
    let text = strip_comments(&header());
    for piece in text.split("typedef struct ").skip(1) {
        let name = piece.split(|c: char| !(c.is_alphanumeric() || c == '_')).next().unwrap();
        if piece.trim_start()[name.len()..].trim_start().starts_with('{') {
            assert!(rust.contains_key(name), "struct {name} of the header has no layout check");
        }
    }
    assert_eq!(c_values("layouts", &program), rust);
}

macro_rules! constants {
    ($($name:ident),* $(,)?) => {{
        let mut rust = BTreeMap::new();
        $( rust.insert(stringify!($name).to_string(), format!("{}", outlive_sys::$name as i128)); )*
        rust
    }};
}

#[test]
fn every_constant_and_enumeration_value_equals_the_header() {
    let text = strip_comments(&header());
    let mut names = Vec::new();
    for line in text.lines() {
        let line = line.trim();
        if let Some(rest) = line.strip_prefix("#define OUTLIVE_") {
            let name = format!("OUTLIVE_{}", rest.split(|c: char| !(c.is_alphanumeric() || c == '_')).next().unwrap());
            let after = &rest[name.len() - "OUTLIVE_".len()..];
            // Function-like macros, include guards, the API attribute, the
            // internals of OUTLIVE_HANDLER and the *_INIT initialisers are not values.
            if after.starts_with('(')
                || after.trim().is_empty()
                || name.starts_with("OUTLIVE__")
                || name == "OUTLIVE_API"
                || name.ends_with("_INIT")
            {
                continue;
            }
            names.push(name);
        }
    }
    for piece in text.split("typedef enum").skip(1) {
        let body = &piece[piece.find('{').unwrap() + 1..piece.find('}').unwrap()];
        for value in body.split(',') {
            let name = value.split('=').next().unwrap().trim();
            if !name.is_empty() {
                names.push(name.to_string());
            }
        }
    }
    let mut rust = constants!(
        OUTLIVE_VERSION_MAJOR,
        OUTLIVE_VERSION_MINOR,
        OUTLIVE_VERSION_PATCH,
        OUTLIVE_VERSION_NUMBER,
        OUTLIVE_ID_SIZE,
        OUTLIVE_OK,
        OUTLIVE_E_INVALID_ARGUMENT,
        OUTLIVE_E_NOT_FOUND,
        OUTLIVE_E_UNRESOLVED,
        OUTLIVE_E_TYPE_MISMATCH,
        OUTLIVE_E_MISSING_ARGUMENT,
        OUTLIVE_E_INVALIDATED,
        OUTLIVE_E_CORRUPT,
        OUTLIVE_E_IO,
        OUTLIVE_E_BUSY,
        OUTLIVE_E_PERMISSION,
        OUTLIVE_E_STATE,
        OUTLIVE_E_VERSION,
        OUTLIVE_E_NO_MEMORY,
        OUTLIVE_E_LIMIT,
        OUTLIVE_LOG_ERROR,
        OUTLIVE_LOG_WARNING,
        OUTLIVE_LOG_INFO,
        OUTLIVE_LOG_DEBUG,
        OUTLIVE_TYPE_ID,
        OUTLIVE_TYPE_HANDLER,
        OUTLIVE_TYPE_BOOL,
        OUTLIVE_TYPE_INT,
        OUTLIVE_TYPE_DOUBLE,
        OUTLIVE_TYPE_INTEGER,
        OUTLIVE_TYPE_UINTEGER,
        OUTLIVE_MAX_NAME_SIZE,
        OUTLIVE_MAX_ID_SIZE,
        OUTLIVE_MAX_ARGUMENTS,
        OUTLIVE_MAX_NESTING,
        OUTLIVE_DURABILITY_FULL,
        OUTLIVE_DURABILITY_NORMAL,
        OUTLIVE_STORE_OPTIONS_VERSION,
        OUTLIVE_KV_MAX_KEY_SIZE,
        OUTLIVE_KV_MAX_VALUE_SIZE,
        OUTLIVE_HANDLER_MAGIC,
        OUTLIVE_HANDLER_DESCRIPTOR_VERSION,
        OUTLIVE_MAX_DECLARED_PARAMETERS,
        OUTLIVE_MAX_SERIALIZED_SIZE,
        OUTLIVE_TASK_MAX_GROUP_ID_SIZE,
        OUTLIVE_TASK_MAX_GROUP_MEMBERS,
        OUTLIVE_TASK_MAX_BATCH,
        OUTLIVE_TASK_DEFAULT_COMPLETION_BATCH,
        OUTLIVE_TASK_MAX_COMPLETION_BATCH,
        OUTLIVE_TASK_SPEC_VERSION,
        OUTLIVE_TASK_POLICY_VERSION,
        OUTLIVE_TASK_PENDING,
        OUTLIVE_TASK_RUNNING,
        OUTLIVE_TASK_DEAD,
        OUTLIVE_QUEUE_ORDERED,
        OUTLIVE_QUEUE_PARALLEL,
        OUTLIVE_QUEUE_MAX_NAME_SIZE,
        OUTLIVE_QUEUE_MAX_LIMIT,
        OUTLIVE_TASK_MAX_UNIQUE_KEY_SIZE,
        OUTLIVE_TASK_OPTIONS_VERSION,
        OUTLIVE_SCHEDULE_MAX_NAME_SIZE,
        OUTLIVE_SCHEDULE_MAX_CRON_SIZE,
        OUTLIVE_SCHEDULE_PERIOD_VERSION,
        OUTLIVE_DELIVERY_ONCE,
        OUTLIVE_DELIVERY_UNTIL_TERMINATED,
        OUTLIVE_LIFETIME_THIS_RUN,
        OUTLIVE_LIFETIME_PROCESS,
        OUTLIVE_LIFETIME_ANY_PROCESS,
        OUTLIVE_SIGNAL_MAX_SCOPE_SIZE,
        OUTLIVE_CHOICE_REGULAR,
        OUTLIVE_CHOICE_CANCEL,
        OUTLIVE_CHOICE_DESTRUCTIVE,
        OUTLIVE_CHOICE_DEFAULT,
        OUTLIVE_PRESENTATION_PRESENTED,
        OUTLIVE_PRESENTATION_NOT_PRESENTED,
        OUTLIVE_MESSAGE_MAX_CATEGORY_SIZE,
        OUTLIVE_MESSAGE_MAX_TITLE_SIZE,
        OUTLIVE_MESSAGE_MAX_TEXT_SIZE,
        OUTLIVE_MESSAGE_MAX_SCOPE_SIZE,
        OUTLIVE_MESSAGE_MAX_THREAD_SIZE,
        OUTLIVE_MESSAGE_MAX_CHOICE_ID_SIZE,
        OUTLIVE_MESSAGE_CHOICE_ID_SIZE,
        OUTLIVE_MESSAGE_MAX_CHOICE_LABEL_SIZE,
        OUTLIVE_MESSAGE_MAX_CHOICES,
        OUTLIVE_MESSAGE_MAX_CALLBACK_ID_SIZE,
        OUTLIVE_MESSAGES_DEFAULT_CATEGORY_LIMIT,
        OUTLIVE_PRIORITY_WONT_PRESENT,
        OUTLIVE_PRIORITY_LOW,
        OUTLIVE_PRIORITY_DEFAULT,
        OUTLIVE_PRIORITY_HIGH,
        OUTLIVE_PRESENTER_VERSION,
        OUTLIVE_DURABLE_INTERACTIONS_MAX_NAME_SIZE,
        OUTLIVE_DURABLE_INTERACTIONS_SUSPENDED,
        OUTLIVE_OPERATION_NEW,
        OUTLIVE_OPERATION_WAITING,
        OUTLIVE_OPERATION_EXECUTING,
        OUTLIVE_OPERATION_FINISHED,
        OUTLIVE_OPERATIONS_UNLIMITED,
    );
    // Constants of type double compare bit for bit (a cast to an integer
    // would call 0.01 and 0.02 equal).
    const DOUBLES: &[(&str, f64)] = &[
        ("OUTLIVE_SCHEDULE_MIN_INTERVAL", outlive_sys::OUTLIVE_SCHEDULE_MIN_INTERVAL),
        ("OUTLIVE_SCHEDULE_MAX_INTERVAL", outlive_sys::OUTLIVE_SCHEDULE_MAX_INTERVAL),
    ];
    for (name, value) in DOUBLES {
        rust.insert(name.to_string(), value.to_bits().to_string());
    }
    // The one string constant.
    rust.insert(
        "OUTLIVE_DURABLE_INTERACTION_FINISH".into(),
        outlive_sys::OUTLIVE_DURABLE_INTERACTION_FINISH.to_str().unwrap().to_string(),
    );
    let mut program = String::new();
    for name in &names {
        if DOUBLES.iter().any(|(double, _)| *double == name.as_str()) {
            program.push_str(&format!(
                "printf(\"{name} %llu\\n\", ((union {{ double d; unsigned long long u; }}){{ (double)({name}) }}).u);\n"
            ));
        } else if name == "OUTLIVE_DURABLE_INTERACTION_FINISH" {
            program.push_str(&format!("printf(\"{name} %s\\n\", {name});\n"));
        } else {
            program.push_str(&format!("printf(\"{name} %lld\\n\", (long long)({name}));\n"));
        }
    }
    let c = c_values("constants", &program);
    let missing: Vec<_> = names.iter().filter(|n| !rust.contains_key(*n)).collect();
    assert!(missing.is_empty(), "header constants without a Rust constant: {missing:?}");
    assert!(names.len() > 80, "only {} constants found in the header", names.len());
    for name in &names {
        assert_eq!(rust[name], c[name], "{name}");
    }
}
