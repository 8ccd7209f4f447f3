#!/usr/bin/env python3
"""Print the text of each page of a PDF (needs pypdf)."""
import sys

def main(path):
    from pypdf import PdfReader
    for i, page in enumerate(PdfReader(path).pages, 1):
        print(f"--- page {i} ---")
        print(page.extract_text())

if __name__ == "__main__":
    main(sys.argv[1])
