/// `1 service`, `2 services`: a count and its noun, plural unless the count is one.
func counted(_ count: Int, _ singular: String, plural: String? = nil) -> String {
    "\(count) " + (count == 1 ? singular : plural ?? singular + "s")
}
