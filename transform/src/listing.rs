//! The catalogue on its way up: every declaration the layer can read gains the reason
//! property (R1, R6); every other one passes through byte for byte (R2, R4, R5, R7).

use crate::json::{self, Object};
use crate::options::{Options, Position};
use crate::schema::{self, Extensible};
use crate::shape;
use alloc::collections::BTreeSet;
use alloc::string::String;
use alloc::vec::Vec;

/// A catalogue as the model sees it, and the names it augmented.
pub(crate) struct Listing {
    /// The declarations, in the order they came.
    pub declarations: Vec<String>,
    /// The tools whose calls are to be stripped (R8).
    pub augmented_tools: BTreeSet<String>,
}

/// What the layer makes of one declaration.
enum Reading {
    /// Readable and free of the name: its augmented text.
    Extended { name: String, text: String },
    /// Passed through as it came; the names it could be known by.
    Untouched { names: Vec<String> },
}

/// Augments a catalogue under `options`.
pub(crate) fn augment(catalogue: Vec<String>, options: &Options) -> Listing {
    if cfg!(feature = "mutant-augment-nothing") {
        return Listing {
            declarations: catalogue,
            augmented_tools: BTreeSet::new(),
        };
    }
    let readings: Vec<Reading> = catalogue.iter().map(|d| read(d, options)).collect();
    // R7: a name shared with any untouched declaration is augmented nowhere. (Inserted
    // one by one: collecting into the set would link a stable sort, 5 kB of component,
    // for nothing the insertions do not do.)
    let mut doubtful = BTreeSet::new();
    for reading in &readings {
        if let Reading::Untouched { names } = reading
            && !cfg!(feature = "mutant-ignore-duplicates")
        {
            doubtful.extend(names.iter().cloned());
        }
    }
    let mut augmented_tools = BTreeSet::new();
    let declarations = catalogue
        .into_iter()
        .zip(readings)
        .map(|(original, reading)| match reading {
            Reading::Extended { name, text } if !doubtful.contains(&name) => {
                augmented_tools.insert(name);
                text
            }
            _ => original,
        })
        .collect();
    Listing {
        declarations,
        augmented_tools,
    }
}

fn read(declaration: &str, options: &Options) -> Reading {
    let Some(object) = Object::parse(declaration) else {
        return Reading::Untouched { names: Vec::new() };
    };
    let untouched = || Reading::Untouched {
        names: shape::names(&object),
    };
    let Some(found) = shape::find(&object) else {
        return untouched();
    };
    if options.leaves_alone(&found.name) {
        return untouched();
    }
    match schema::read(found.schema, &options.name) {
        Err(_) => untouched(),
        Ok(schema) => Reading::Extended {
            text: extend(declaration, &schema, found.strict, options),
            name: found.name,
        },
    }
}

/// The declaration with the property added to its schema, by inserting text: every byte
/// of the original stays where it was (R2).
fn extend(declaration: &str, schema: &Extensible<'_>, strict: bool, options: &Options) -> String {
    // R6: strict mode spells "optional" as nullable; required mode wants a string.
    let nullable = strict && !options.required && !cfg!(feature = "mutant-strict-not-nullable");
    let property = property(options, nullable);
    let mut edits = Vec::with_capacity(2);
    let mut new_members = Vec::new();
    match &schema.properties {
        Some(properties) => edits.push(insert(
            declaration,
            properties.text,
            properties.members.is_empty(),
            property,
            options.position,
        )),
        None => new_members.push(alloc::format!("\"properties\":{{{property}}}")),
    }
    // R6: strict mode lists every property in `required`.
    if strict || options.required {
        let mut name = String::new();
        json::push_string(&mut name, &options.name);
        match schema.required {
            Some((list, count)) => {
                edits.push(insert(declaration, list, count == 0, name, Position::Last))
            }
            None => new_members.push(alloc::format!("\"required\":[{name}]")),
        }
    }
    if !new_members.is_empty() {
        edits.push(insert(
            declaration,
            schema.schema.text,
            schema.schema.members.is_empty(),
            new_members.join(","),
            Position::Last,
        ));
    }
    splice(declaration, edits)
}

/// The member `"reason":{…}` as the model reads it.
fn property(options: &Options, nullable: bool) -> String {
    let mut out = String::with_capacity(options.description.len() + 64);
    json::push_string(&mut out, &options.name);
    out.push_str(if nullable {
        r#":{"type":["string","null"],"description":"#
    } else {
        r#":{"type":"string","description":"#
    });
    json::push_string(&mut out, &options.description);
    out.push('}');
    out
}

/// An edit putting `item` into `container` (an object or a list, a slice of `whole`) at
/// its start or end, with the comma it needs.
fn insert(
    whole: &str,
    container: &str,
    empty: bool,
    item: String,
    position: Position,
) -> (usize, String) {
    let start = json::offset_in(whole, container);
    match (position, empty) {
        (Position::First, true) | (Position::Last, true) => (start + 1, item),
        (Position::First, false) => (start + 1, item + ","),
        (Position::Last, false) => (start + container.len() - 1, String::from(",") + &item),
    }
}

/// `text` with each `(offset, insertion)` applied.
fn splice(text: &str, mut edits: Vec<(usize, String)>) -> String {
    // Each edit is inside a container of its own, so no two share an offset, and an
    // unstable sort (the smaller code) orders them as well as a stable one.
    edits.sort_unstable_by_key(|(at, _)| *at);
    let added: usize = edits.iter().map(|(_, insertion)| insertion.len()).sum();
    let mut out = String::with_capacity(text.len() + added);
    let mut copied = 0;
    for (at, insertion) in edits {
        out.push_str(text.get(copied..at).unwrap_or_default());
        out.push_str(&insertion);
        copied = at;
    }
    out.push_str(text.get(copied..).unwrap_or_default());
    out
}
