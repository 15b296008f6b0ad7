"""What a test file uses to explain a failing exercise: Diagnosis and the causes several exercises
share (causes), and the search over the lesson's steps and their slips (slips)."""
