"""`medvqa new-adapter`: the adapter package it writes (`adapter`), from the files' templates
(`templates/*.tmpl`), the words of the exam's language (`phrasebook`) and a three-item fixture
(`fixture`)."""
