//! Splitting text into words: response files (`@file`, `--options-file`) and the
//! comma-separated lists nvcc takes as option values.

/// What [`split`] does with quotes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Quotes {
    /// As a shell would: quotes group and are removed, a backslash escapes the next
    /// character (outside single quotes). For response files and for the values of
    /// `-Xcompiler`/`-Xlinker`/`-Xptxas`, which nvcc hands to a shell.
    Strip,
    /// Quotes group (a separator inside them does not split) but stay in the word, and
    /// backslashes are kept: for `-D`/`-I`/... lists, where `-DNAME="a,b"` keeps its
    /// string literal.
    Keep,
}

/// Splits `text` into words at every character `sep` accepts, outside quotes. Empty
/// words are dropped, except a quoted empty word (`''`) with [`Quotes::Strip`].
pub fn split(text: &str, sep: impl Fn(char) -> bool, quotes: Quotes) -> Vec<String> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut open: Option<char> = None;
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        let escapes = quotes == Quotes::Strip && open != Some('\'');
        if c == '\\' && escapes {
            // In double quotes a backslash escapes only `"` and `\`, as in a shell.
            let next = chars.next();
            let w = word.get_or_insert_with(String::new);
            match next {
                Some(n) if open.is_none() || n == '"' || n == '\\' => w.push(n),
                Some(n) => {
                    w.push('\\');
                    w.push(n);
                }
                None => w.push('\\'),
            }
            continue;
        }
        match open {
            Some(q) if c == q => {
                open = None;
                if quotes == Quotes::Keep {
                    word.get_or_insert_with(String::new).push(c);
                }
            }
            Some(_) => word.get_or_insert_with(String::new).push(c),
            None if c == '"' || c == '\'' => {
                open = Some(c);
                let w = word.get_or_insert_with(String::new);
                if quotes == Quotes::Keep {
                    w.push(c);
                }
            }
            None if sep(c) => words.extend(word.take()),
            None => word.get_or_insert_with(String::new).push(c),
        }
    }
    words.extend(word);
    if quotes == Quotes::Keep {
        words.retain(|w| !w.is_empty());
    }
    words
}

/// The words of a response file: whitespace separates, quotes and backslashes as in a
/// shell.
pub fn response_file(text: &str) -> Vec<String> {
    split(text, char::is_whitespace, Quotes::Strip)
}

/// The words of a `-Xcompiler`/`-Xlinker`/`-Xptxas` value: nvcc splits it at commas and
/// a shell then splits it at whitespace; quotes keep either together (`-Xcompiler
/// '"-Wl,-rpath,/x"'` is one word).
pub fn tool_options(value: &str) -> Vec<String> {
    split(value, |c| c == ',' || c.is_whitespace(), Quotes::Strip)
        .into_iter()
        .filter(|w| !w.is_empty())
        .collect()
}

/// The items of an nvcc list value (`-I a,b`, `-D X=1,Y`): split at commas outside
/// quotes, quotes kept.
pub fn list(value: &str) -> Vec<String> {
    split(value, |c| c == ',', Quotes::Keep)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn response_files_split_like_a_shell() {
        assert_eq!(
            response_file("-c  'my file.cu'\n\"-DX=a b\" a\\ b ''\t-o\\\"x"),
            vec!["-c", "my file.cu", "-DX=a b", "a b", "", "-o\"x"]
        );
        assert_eq!(
            response_file("'it''s' \"a\\\"b\\c\""),
            vec!["its", "a\"b\\c"]
        );
        // Unterminated quotes and a trailing backslash end the word, no panic.
        assert_eq!(response_file("'open \\"), vec!["open \\"]);
        assert_eq!(response_file("x\\"), vec!["x\\"]);
        assert!(response_file(" \n\t ").is_empty());
    }

    #[test]
    fn tool_options_split_at_commas_and_spaces_outside_quotes() {
        assert_eq!(tool_options("-fPIC,-Wall"), vec!["-fPIC", "-Wall"]);
        assert_eq!(
            tool_options("-O3 -march=native,"),
            vec!["-O3", "-march=native"]
        );
        assert_eq!(
            tool_options("\"-Wl,-rpath,/x\",-g"),
            vec!["-Wl,-rpath,/x", "-g"]
        );
        assert_eq!(tool_options("-DNAME=\\\"v\\\""), vec!["-DNAME=\"v\""]);
        assert!(tool_options(",,").is_empty());
    }

    #[test]
    fn lists_keep_their_quotes() {
        assert_eq!(list("A=1,B"), vec!["A=1", "B"]);
        assert_eq!(list("S=\"a,b\",T"), vec!["S=\"a,b\"", "T"]);
        assert_eq!(list("/a b,/c"), vec!["/a b", "/c"]);
        assert!(list(",").is_empty());
    }
}
