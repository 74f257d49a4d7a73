"""biocite: answers biomedical questions from PubMed abstracts, every sentence citing checkable evidence."""

__version__ = "0.1.0"
