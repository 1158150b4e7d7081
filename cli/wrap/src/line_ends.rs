//! A file's line ends, kept: an editor that writes `\n` (toml_edit, which reads `\r\n` as
//! `\n`; a line wrap adds to a YAML file) must not leave a CRLF file with LF or mixed
//! line ends.

/// `edited`, a new text of `original`, with CRLF line ends throughout when every line of
/// `original` ends so; as it is otherwise.
pub(crate) fn as_in(original: &str, edited: String) -> String {
    let lines = original.matches('\n').count();
    if lines == 0 || original.matches("\r\n").count() != lines {
        return edited;
    }
    edited.replace("\r\n", "\n").replace('\n', "\r\n")
}

#[cfg(test)]
mod tests {
    use super::as_in;

    #[test]
    fn a_crlf_file_stays_crlf_and_any_other_as_the_editor_wrote_it() {
        assert_eq!(as_in("a\r\nb\r\n", "a\nb\r\nc\n".into()), "a\r\nb\r\nc\r\n");
        assert_eq!(as_in("a\nb\r\n", "a\nb\n".into()), "a\nb\n");
        assert_eq!(as_in("a", "a\nb".into()), "a\nb");
    }
}
