namespace java com.facebook.fb303
service FacebookService {
}
