"""Chapter 11's manifest (for instructors): what the chapter is made of, read by the build, the tests and the
navigation. Left out of the learner's working copy and the student copy (``audience="instructor"``)."""

from labkit.chapters.manifest import Chapter

CHAPTER = Chapter(
    number="11",
    slug="class_labels",
    title="The class's labels",
    summary="a class's labels: agreement, the items it split on, every judge re-checked",
    does=(
        "for instructors: the class folder learners share their labels into (opt-in, pseudonymous, each writes only "
        "their own file), read back with what it refuses said; raters per item, Fleiss' κ and Krippendorff's α with "
        "intervals and whether they recover a simulated class's noise, each rater against the others' majority, the "
        "items the class split on; 06's judges (TPR/TNR, the Rogan–Gladen rate), 07's 2×2 and checks, 02's realism "
        "rater and 10's first passages re-run on the class's majority beside the AI rater's labels; export, merge "
        "with another class, the self-checks' progress. Stored outputs: simulated raters, never people"
    ),
    status="ready",
    audience="instructor",
)
