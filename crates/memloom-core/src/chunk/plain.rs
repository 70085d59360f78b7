//! Plain text -> one section of paragraphs (runs of non-blank lines) under the file name.

use super::{file_name, Block, Section};

pub(crate) fn sections(source: &str, text: &str) -> Vec<Section> {
    let mut blocks = Vec::new();
    let mut open: Option<Block> = None;
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        let trimmed_len = line.trim_end().len();
        if trimmed_len == 0 {
            blocks.extend(open.take());
        } else {
            let end = at + trimmed_len;
            match open.as_mut() {
                Some(block) => block.end = end,
                None => open = Some(Block { start: at, end }),
            }
        }
        at += line.len();
    }
    blocks.extend(open);
    if blocks.is_empty() {
        return Vec::new();
    }
    vec![Section {
        breadcrumb: file_name(source).to_string(),
        blocks,
    }]
}

#[cfg(test)]
mod tests {
    #[test]
    fn paragraphs_are_blocks() {
        let s = super::sections("n/notes.txt", "one\ntwo\n\n\nthree  \n");
        assert_eq!(s[0].breadcrumb, "notes.txt");
        let b: Vec<(usize, usize)> = s[0].blocks.iter().map(|b| (b.start, b.end)).collect();
        assert_eq!(b, [(0, 7), (10, 15)]);
    }
}
