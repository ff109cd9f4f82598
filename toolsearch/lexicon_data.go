package toolsearch

// concepts is the lexicon's data: for each concept, the words tool
// definitions use (terms), then the English and the Chinese ways people
// ask for it. It is written for the vocabulary of tools in general, not
// for any one server; a word may belong to several concepts.
var concepts = []concept{
	// Generic verbs and question words.
	{"search find query", "find, search, look for, look up, locate, hunt for, seek, track down, dig up, discover, where is, where are, where can, which one", "找, 找到, 找出, 找一下, 找找, 搜, 搜索, 搜一下, 查找, 查, 查一下, 寻找, 检索, 哪里有, 在哪, 在哪里, 在哪儿"},
	{"read get show view", "show, display, view, see, look at, check, inspect, examine, give me, pull up, bring up, peek, glance, what is in, what's in, contents of, open", "看, 看看, 看一下, 瞧, 瞧瞧, 显示, 展示, 查看, 打开, 调出, 给我看"},
	{"list all", "list, all, enumerate, show all, what are, which, catalogue, inventory, rundown, overview, every, all of", "列出, 列表, 清单, 有哪些, 都有什么, 都有哪些, 有什么, 全部列出, 罗列, 一览"},
	{"create new add", "new, brand new, create, make, set up, start, open a new, spin up, initialize, init, bootstrap, generate, add, build", "新, 新建, 添加, 增加, 创建, 建立, 建, 建一个, 开一个, 新增, 生成, 搭建, 初始化"},
	{"update edit change modify", "update, change, modify, edit, alter, adjust, tweak, amend, revise, correct, fix, set, patch", "更新, 修改, 改, 改一下, 改成, 调整, 修正, 纠正, 修复, 设置, 更改, 变更"},
	{"delete remove", "delete, remove, erase, rm, trash, discard, drop, get rid of, wipe, purge, clear out, destroy, unlink, clean up, throw away", "删除, 删掉, 删, 去掉, 清除, 移除, 丢掉, 扔掉, 清理, 销毁, 清空"},
	{"details info information", "details, detail, info, information, specifics, more about, describe, description, facts about, particulars", "详情, 详细, 详细信息, 信息, 情况, 资讯, 具体"},
	{"count number total", "how many, count, number of, total, tally, quantity", "多少个, 几个, 数量, 总数, 一共"},
	{"copy duplicate", "copy, duplicate, replicate, clone, mirror", "复制, 拷贝, 副本, 克隆, 复制一份, 拷贝一份"},
	{"multiple batch", "several, multiple, many, batch, bunch, a few, together, at once, in one go, simultaneously, all at once, bulk, these, those", "多个, 几个, 一些, 一起, 批量, 同时, 一次性, 这些, 那些, 好几个"},
	{"date time", "when, what time, date, day, timestamp, time, deadline, due", "什么时候, 何时, 几点, 哪天, 日期, 时间, 时候"},
	{"user users profile people person name", "named, called, by the name, whose name, name is, who, whom, whose, someone, somebody, anyone, person, people, user, member, account, username, handle", "谁, 的人, 叫, 名叫, 叫做, 名字叫, 哪位, 什么人, 这个人, 那个人, 哪个人, 用户, 成员, 账号, 账户, 用户名"},
	{"location place address", "where, whereabouts, location, position, site", "哪里, 哪儿, 在哪, 位置, 地点, 什么地方"},
	{"compare difference", "compare, comparison, difference, diff, versus, vs, contrast", "比较, 对比, 区别, 差异, 不同"},
	{"convert transform", "convert, transform, turn into, translate into, change into", "转换, 转成, 转为, 变成"},
	{"download content", "download, fetch, grab, pull down, retrieve, save locally", "下载, 拉取, 获取, 抓取"},
	{"upload push write", "upload, push up, send up, publish", "上传, 推送, 发布"},
	{"enable disable toggle", "turn on, turn off, switch on, switch off, enable, disable, toggle, flip, activate, deactivate, mute, unmute", "打开, 关闭, 开启, 关掉, 切换, 启用, 禁用, 开关, 静音"},
	{"run execute trigger operation", "run, execute, trigger, launch, kick off, invoke, perform, fire off", "运行, 执行, 触发, 启动, 跑一下, 调用"},

	// Files and folders.
	{"file", "file, document, doc, documents, attachment", "文件, 文档, 档案, 附件"},
	{"text file read content", "txt, plain text, text, markdown, md, readme, notes, note file, json, yaml, yml, toml, csv, tsv, xml, html, ini, conf, config file, source file, log file, script", "文本, 文本文件, 纯文本, 笔记, 配置文件, 源文件, 日志文件, 脚本"},
	{"directory folder", "folder, folders, dir, directory, subfolder, subdirectory, subdir, path, location on disk", "文件夹, 目录, 子目录, 子文件夹, 路径"},
	{"list directory files", "ls, what's inside, what is inside, inside, in the folder, contents of the folder, what files, which files, dir listing, folder contents, browse folder", "下面有什么, 里面有什么, 里有什么, 有哪些文件, 目录内容, 文件列表, 下有什么"},
	{"image media", "image, images, photo, photos, picture, pictures, pic, pics, screenshot, screen shot, screengrab, png, jpg, jpeg, gif, webp, svg, bmp, tiff, heic, icon, logo, thumbnail, scan, diagram, chart, drawing, illustration, artwork, meme, selfie", "图片, 照片, 截图, 截屏, 相片, 图像, 头像, 图标, 图表, 插图, 自拍, 表情包, 图"},
	{"audio media", "audio, mp3, wav, m4a, ogg, flac, aac, sound, recording, voice memo, voice note, voice message, podcast, song, music, listen, listen to, hear", "音频, 录音, 语音, 声音, 音乐, 歌, 歌曲, 播客, 听, 听一下, 听听"},
	{"video media", "video, mp4, mov, avi, mkv, movie, clip, film, footage, recording", "视频, 录像, 影片, 电影, 短片"},
	{"media file", "pdf, binary, blob, base64, mime, media, attachment", "媒体, 多媒体, 二进制"},
	{"write file save content", "save, store, write, write out, write down, dump to, persist, put into a file, to disk, on disk, as a file, overwrite, save as", "保存, 存, 存下, 存盘, 存成, 写入, 写到, 写进, 另存为, 覆盖, 落盘"},
	{"edit replace line text", "fix, typo, patch, amend, swap, substitute, switch out, replace with, instead of, find and change, rewrite, find and replace, search and replace, replace, line, lines, insert line, change line, correct the text", "改一下, 修正, 纠正, 替换, 错别字, 笔误, 第几行, 行"},
	{"create directory", "mkdir, new folder, make a folder, make a directory, create a folder", "新建文件夹, 创建目录, 建目录, 建文件夹"},
	{"size sizes", "size, sizes, how much room, room taken, how much space, how big, how large, big, large, largest, biggest, bytes, kb, mb, gb, space, disk space, disk usage, du, weight, heavy, heaviest, take up, most space", "大小, 多大, 占用, 空间, 最大, 体积, 容量, 字节, 占了"},
	{"tree directory recursive structure", "tree, hierarchy, nested, nesting, layout, structure, outline, recursive, recursively, everything under, whole project, all subfolders, folder structure, project structure", "结构, 层级, 树, 树状, 树形, 嵌套, 目录结构, 项目结构, 递归, 层次"},
	{"move rename file", "move, relocate, rename, transfer, mv, shift, put into, file into, drag, reorganize, call it", "移动, 移到, 挪, 挪到, 搬, 搬到, 改名, 重命名, 改名为, 放到, 放进, 转移"},
	{"search files pattern", "glob, wildcard, matching, match, pattern, every file, all files, find files, recursively search, filename, file name, extension", "找出, 匹配, 通配符, 文件名, 后缀, 扩展名, 所有的"},
	{"file info metadata modified time size permissions", "when was, last modified, last changed, last edited, timestamp, creation date, mtime, ctime, stat, properties, owner of, permissions, attributes, file details, metadata, how old", "修改时间, 创建时间, 什么时候, 属性, 元数据, 权限, 最后修改, 改的, 修改的, 创建的, 时间戳"},
	{"allowed directories access", "permitted, allowed, allow, access, accessible, reach, touch, sandbox, roots, can you see, can you read, have access, which folders, which directories, permission", "允许, 有权限, 能访问, 可以访问, 可访问, 权限, 能看到, 能读, 可以读, 可以访问哪些"},
	{"read multiple files", "several files, multiple files, many files, these files, those files, both files, all these files, files together, a few files, batch of files", "多个文件, 几个文件, 这些文件, 那些文件, 两个文件, 一起读"},
	{"compress gzip zip archive", "zip, gzip, gz, compress, compression, archive, shrink, tar, tarball, pack, squeeze, smaller", "压缩, 打包, 解压, 压缩包, 归档"},

	// Git and code hosting.
	{"repository repo", "repo, repos, repository, repositories, project, projects, codebase, code base, source tree, git project, open source", "仓库, 代码仓库, 代码库, 项目, 库, 源码库, 开源项目, 开源"},
	{"fork repository", "fork, own copy, my own copy, personal copy, clone, copy of the repo, copy their repo, copy someone's repo, mirror, duplicate the repo, copy to my account", "复刻, 派生, 分叉, 复制一份, 克隆, 拷贝一份, 复制到我的, 弄一份, 复制仓库, 复制到我"},
	{"create repository", "new repo, new repository, new project, start a project, init a repo, set up a repo, host my code, publish my code", "新仓库, 新项目, 新建仓库, 创建仓库, 建仓库, 建个仓库, 开个项目"},
	{"account organization", "account, my account, organization, org, orgs, company account, team account, namespace, profile", "账号, 账户, 组织, 公司, 团队账号, 名下, 我的账号"},
	{"branch", "branch, branches, main branch, master branch, feature branch, topic branch, off main, off master, trunk, mainline, develop, dev branch", "分支, 主干, 主分支, 特性分支, 开发分支, 功能分支"},
	{"commit commits history", "commit, commits, changeset, revision, revisions, sha, hash, git log, history, changelog, commit history, recent changes, what changed, who changed", "提交, 提交记录, 提交历史, 版本, 修订, 变更记录, 改动记录, 历史, 日志"},
	{"push files commit", "push, upload files, commit files, check in, publish files, send files, several files in one commit, one commit", "推送, 推, 推上去, 上传, 提交文件, 签入"},
	{"pull request", "pr, prs, pull request, pull requests, merge request, mr, mrs, patch, contribution, changeset for review, propose, proposal, upstream, send my changes, submit changes", "拉取请求, 合并请求, 拉请求, 贡献, 提议, 提交修改, 合入请求"},
	{"merge pull request", "merge, land, integrate, accept, squash, ship, merge in, fold in, get it in", "合并, 合进, 合入, 并入, 合到, 合一下"},
	{"review comment", "review, reviews, reviewer, reviewers, approve, approval, lgtm, request changes, code review, feedback, sign off, critique", "评审, 审查, 审核, 审阅, 批准, 通过, 代码审查, 反馈, 意见"},
	{"status check", "ci, status checks, ci checks, build, builds, pipeline, passing, passed, failing, failed, green, red, tests pass, test results, workflow, actions, status", "状态, 检查, 流水线, 构建, 测试结果, 通过了, 挂了, 过了吗"},
	{"issue issues", "issue, issues, discussion, discussions, ticket, tickets, bug, bugs, bug report, defect, task, feature request, todo, backlog, tracker, issue tracker", "问题, 工单, 缺陷, 议题, 需求, 任务, 问题单, 漏洞, 报错"},
	{"create issue", "report, report a bug, file a bug, file an issue, open a ticket, open an issue, raise, raise an issue, log a bug, submit a bug, new ticket", "提一个, 提个, 报告, 报个, 反馈, 提交问题, 提问题, 开个"},
	{"update issue state", "close, closed, reopen, resolve, resolved, mark done, mark as done, assign, label, milestone, retitle, triage, wont fix", "关闭, 关掉, 重新打开, 重开, 解决, 分配, 指派, 标签, 标记, 里程碑, 改标题"},
	{"comment", "comment, comments, note, remark, leave a note, reply, respond, say on, chime in, write on", "评论, 留言, 备注, 说两句, 回复, 批注"},
	{"search code", "function, functions, class, method, symbol, definition, defined, implementation, implemented, snippet, source code, code, grep, usage, usages, call site, declared, variable", "函数, 代码, 方法, 类, 定义, 实现, 源码, 代码片段, 变量, 调用"},
	{"files changed", "touched, diff, diffs, changed files, modified files, files changed, what changed, which files, changes in, files in the pr", "改了哪些, 改动, 哪些文件, 改了什么, 变更, 差异, 修改了哪些"},
	{"update branch latest changes base", "up to date, sync, rebase, catch up, behind, refresh, pull latest, out of date, latest changes, bring up to date, update from main", "同步, 更新到最新, 落后, 跟上, 变基, 最新"},
	{"file contents", "raw, raw file, source of, contents of, file in the repo, read file in repo", "文件内容, 源文件, 内容"},
	{"release tag version", "release, releases, tag, tags, version, versions, changelog, semver", "发布, 版本, 发行, 发版, 标签"},
	{"star watch", "star, stars, starred, watch, watchers, bookmark, favorite", "星标, 收藏, 点星, 关注"},
	{"assignee assign", "assign, assignee, assignees, owner, responsible, hand to, give to", "分配, 指派, 负责人, 分给"},
	{"label labels", "label, labels, tag as, category, categorize", "标签, 分类, 打标签"},

	// Chat.
	{"message post send", "message, messages, msg, announce, announcement, say, tell, ping, notify, broadcast, shout, post, write to, let know, heads up, drop a line, send", "消息, 信息, 说一声, 通知, 告诉, 发消息, 发个, 发条, 群发, 说一下, 喊, 告知, 广播, 发"},
	{"channel channels", "channel, channels, room, rooms, chatroom, chat room, group chat, group, hashtag", "频道, 群, 群组, 群里, 聊天室, 房间, 群聊, 讨论组"},
	{"thread reply replies", "thread, threads, conversation, discussion, follow up, follow-up, replies, sub thread, under the message, in thread", "线程, 讨论串, 楼, 跟帖, 回帖, 对话, 讨论, 楼中楼"},
	{"reply", "answer, respond, reply, write back, get back to, follow up, react to what", "回复, 答复, 回应, 回一下, 回答, 回他, 回她"},
	{"reaction emoji add", "react, reaction, reactions, emoji, emoticon, thumbs up, thumbs-up, thumb up, upvote, heart, smiley, acknowledge, ack, clap, tada", "点赞, 表情, 赞, 竖大拇指, 点个赞, 比心, 回应表情, 表情回应, 鼓掌"},
	{"history recent messages channel", "lately, recent, recently, history, backlog, catch up on, what did i miss, been saying, been talking, discussed, chatter, last messages, scroll back, what happened in, latest messages", "最近, 聊了, 说了什么, 聊天记录, 历史消息, 之前的消息, 聊了什么, 讨论了什么, 错过了什么"},
	{"workspace", "workspace, slack, team, teams, server, org, company chat", "工作区, 团队, 公司"},
	{"users members profile", "team members, members, teammates, colleagues, coworkers, co-workers, staff, employees, people here, everyone, who works, headcount, directory of people", "同事, 成员, 团队成员, 员工, 大家, 都有谁, 有谁, 人员, 所有人"},
	{"profile user details", "profile, bio, job title, role, avatar, contact, email address, phone, timezone, time zone, display name, real name, about me, who is", "资料, 个人资料, 头像, 简介, 职位, 职务, 联系方式, 个人信息, 时区, 真名"},
	{"direct message user", "dm, direct message, private message, pm, privately, whisper", "私信, 私聊, 单聊, 私下"},
	{"join invite channel member", "join, invite, add to channel, kick, leave the channel", "加入, 邀请, 拉进群, 退出, 进群"},
	{"mention user", "mention, tag someone, at-mention", "提到, 艾特, 提及"},

	// Maps and travel.
	{"place places location", "place, places, spot, venue, location, landmark, poi, point of interest, establishment, attraction, sight, destination", "地点, 地方, 位置, 场所, 景点, 去处, 地标"},
	{"search places nearby", "around here, near me, nearby, close by, closest, nearest, in the area, around, near, in my town, in town, in my city, local, neighborhood, neighbourhood", "附近, 周边, 周围, 哪里有, 本地, 身边, 这边"},
	{"places local businesses restaurants", "restaurant, restaurants, ramen, noodles, tacos, dumplings, bbq, barbecue, steak, steakhouse, vegan, vegetarian, brunch, dessert, ice cream, bubble tea, tea house, seafood, hotpot, hot pot, curry, bistro, diner, fast food, takeout, cafe, cafes, coffee, coffee shop, bar, bars, pub, bakery, pizza, sushi, burger, food, eat, dinner, lunch, breakfast, hotel, hotels, motel, gym, pharmacy, hospital, clinic, doctor, dentist, bank, atm, gas station, petrol station, supermarket, grocery, shop, shops, mall, museum, park, school, parking, car park, cinema, theater, business, businesses", "餐厅, 饭店, 饭馆, 咖啡, 咖啡店, 酒吧, 面包店, 酒店, 宾馆, 旅馆, 超市, 商店, 药店, 医院, 诊所, 银行, 加油站, 好吃, 吃饭, 吃的, 美食, 博物馆, 公园, 学校, 停车场, 电影院, 商场, 店, 健身房"},
	{"place details rating", "opening hours, open on, hours, open now, closes, closing time, phone number, rating, ratings, reviews of, stars, website, menu, is it open, when does it open, when does it close", "营业时间, 电话, 评分, 评价, 几点开门, 几点关门, 开门, 关门, 口碑, 菜单, 营业"},
	{"directions route origin destination", "route, routes, directions, way to, get to, go to, getting to, navigate, navigation, how do i get, how to get, path to, turn by turn, itinerary, commute, journey, trip", "路线, 怎么走, 怎么去, 导航, 路径, 换乘, 去, 走法, 行程, 线路"},
	{"mode travel directions", "drive, driving, car, by car, walk, walking, on foot, bike, biking, cycling, bicycle, transit, bus, train, subway, metro, tube, public transport, taxi", "开车, 驾车, 自驾, 步行, 走路, 骑车, 自行车, 公交, 地铁, 火车, 坐车, 打车, 坐地铁, 坐公交, 高铁"},
	{"time duration travel", "how long, duration, travel time, eta, minutes, hours, takes, take to get, commute time, arrive", "多久, 多长时间, 几个小时, 几分钟, 需要多长, 要多久, 花多少时间, 多长"},
	{"distance travel", "how far, distance, distances, miles, mile, km, kms, kilometers, kilometres, meters, far, mileage", "多远, 距离, 公里, 千米, 英里, 里程, 远不远, 相距"},
	{"elevation", "how high, how tall, altitude, height, above sea level, sea level, elevation, mountain, mount, peak, summit, hill, terrain, tall, high, meters above", "海拔, 高度, 多高, 山, 峰, 高程, 山峰, 有多高, 海平面"},
	{"coordinates latitude longitude geocode", "coordinates, coordinate, on the globe, on earth, globe, latitude, longitude, lat, lng, lon, position, pin, geolocation, geo, geocode, lat long, latlng", "经纬度, 坐标, 纬度, 经度, 定位"},
	{"address geocode", "address, street, avenue, ave, boulevard, blvd, parkway, road, postal code, postcode, zip code, city, house number, which street, what street", "地址, 街道, 门牌, 邮编, 哪条街, 哪个街道, 什么街, 路名"},
	{"reverse geocode address coordinates", "what is at, what's at, which address, what address, what place is at, reverse geocode", "对应哪个, 是哪里, 对应的地址, 反查"},
	{"maps", "map, maps, google maps, on the map", "地图, 谷歌地图"},

	// Web search and news.
	{"web search online internet", "google, bing, search the web, look online, internet, online, web, website, web page, webpage, browse, search engine, duckduckgo, the net", "上网, 网上, 网络, 互联网, 百度, 谷歌, 网页, 网站, 在线, 搜一下"},
	{"news web articles", "headlines, latest, current events, breaking, today, this week, article, articles, press, recent events, trending, what's happening", "新闻, 头条, 最新, 时事, 今天, 报道, 热点, 资讯, 动态"},
	{"search web information", "facts about, info about, learn about, research, find out, read up on, background on", "了解, 查一下, 查查, 资料, 调研"},
	{"weather forecast", "weather, forecast, temperature, rain, snow, sunny, humidity, wind", "天气, 气温, 下雨, 温度, 预报, 下雪"},
	{"fetch url web page", "url, link, http, https, fetch, scrape, crawl, download the page", "网址, 链接, 抓取, 爬取"},

	// Knowledge graphs and memory.
	{"memory knowledge graph", "memory, memories, remember, recall, memorize, know about, knowledge, brain, what you know, you know, stored, saved facts, long term memory", "记忆, 记住, 记得, 回忆, 知道, 知识, 记下, 记着"},
	{"create entities observations", "remember that, note that, keep in mind, record that, store that, memorize that, save that, jot down", "记下, 记住, 记一下, 记录, 记着, 备忘"},
	{"relations relation", "relationship, relationships, relation, relations, connection, connections, link between, linked, works at, works for, married to, friend of, belongs to, reports to, boss, manager, related to, colleague of, parent of, child of, member of", "关系, 关联, 联系, 老板, 上司, 朋友, 属于, 是谁的, 同事关系, 父亲, 母亲, 家人"},
	{"entity entities node", "thing, things, object, concept, entity, entities, node, nodes, item, items", "实体, 东西, 对象, 人物, 节点, 条目"},
	{"observation observations", "fact, facts, detail, attribute, property, observation, trait, tidbit", "事实, 细节, 属性, 特点, 观察"},
	{"delete entities observations relations", "forget, forget about, unlearn, erase from memory, stop remembering", "忘掉, 忘记, 忘了, 别记了, 不要记"},
	{"read entire graph all", "everything, entire, whole, full, complete, dump, export, all of it, everything you know, all you know, all you remember", "全部, 所有, 一切, 整个, 全都, 全, 所有的, 完整"},
	{"graph knowledge", "graph, knowledge graph, kg, ontology, knowledge base", "图谱, 知识图谱, 知识库"},
	{"search nodes memory", "recall, what do you know, what do you remember, look up in memory, do you remember", "回忆一下, 你知道, 你记得, 还记得"},

	// Thinking.
	{"thinking thought step problem", "think, thinking, step by step, reason, reasoning, break down, plan, planning, figure out, work through, analyze, analyse, reflect, brainstorm, deliberate, chain of thought, carefully, methodically, puzzle, think through", "思考, 一步一步, 逐步, 想清楚, 想一想, 想想, 推理, 分析, 拆解, 规划, 琢磨, 一步步, 仔细想"},

	// The MCP test server's vocabulary.
	{"sum add numbers", "add, plus, sum, total, addition, calculate, compute, arithmetic, math, added to", "加, 求和, 相加, 计算, 总和, 算一下, 加起来, 等于, 加上"},
	{"echo message", "repeat, echo, say back, parrot, mirror, back to me, repeat after", "重复, 复述, 原样, 回显, 照说"},
	{"environment variables env", "env, environment, env vars, variables, configuration, settings, path variable, server config", "环境变量, 环境, 配置, 变量"},
	{"logging log", "logs, logging, log level, verbose, debug output, log messages", "日志, 打日志, 日志级别"},
	{"subscription subscriber updates", "subscribe, subscription, subscriptions, notifications, watch for, updates, unsubscribe", "订阅, 取消订阅, 推送通知, 更新通知"},
	{"long running operation progress", "long task, long running, long-running, progress, background job, slow operation, wait, lengthy", "进度, 长时间, 耗时, 慢, 后台任务"},
	{"resource resources", "resource, resources, uri, reference, references", "资源, 引用"},
	{"annotated annotation", "annotation, annotations, annotated, metadata about content", "注解, 标注, 注释"},
	{"structured content schema", "structured, schema, structured output, json output", "结构化, 结构化数据"},
	{"research", "research, deep research, investigate, study", "研究, 深度研究, 调查"},

	// Databases.
	{"database query sql table", "database, databases, db, sql, table, tables, rows, row, records, record, select, postgres, postgresql, mysql, sqlite, mongo, mongodb, collection", "数据库, 表格, 数据表, 查询, 记录, 数据表"},
	{"schema table columns", "schema, columns, column, fields, table structure, describe table", "表结构, 字段, 列, 模式"},
	{"insert row create", "insert, add row, new record, add a record", "插入, 新增记录, 添加记录"},

	// Calendars, email, tickets, orders, payments.
	{"calendar event meeting schedule", "calendar, meeting, meetings, appointment, event, events, schedule, book, agenda, invite, availability, free slot, busy, reschedule", "日历, 会议, 日程, 预约, 安排, 开会, 活动, 行程"},
	{"date time day", "today, tomorrow, yesterday, tonight, next week, this week, monday, tuesday, wednesday, thursday, friday, saturday, sunday, morning, afternoon, evening", "今天, 明天, 昨天, 后天, 下周, 本周, 周一, 周末, 上午, 下午, 晚上"},
	{"email mail message send inbox", "email, emails, e-mail, mail, inbox, gmail, outlook, mailbox, cc, bcc, reply all, unread", "邮件, 邮箱, 电邮, 收件箱, 发邮件, 未读"},
	{"ticket issue support", "support ticket, helpdesk, help desk, incident, case, jira, service request", "工单, 事件, 支持, 客服"},
	{"order orders purchase", "order, orders, purchase, purchases, buy, bought, checkout, cart, shipment, shipping, delivery, tracking, package, parcel, return", "订单, 购买, 买, 下单, 快递, 物流, 退货, 包裹, 发货"},
	{"payment invoice charge", "pay, paid, payment, payments, invoice, invoices, bill, billing, charge, refund, transaction, transactions, credit card, receipt, subscription fee", "支付, 付款, 发票, 账单, 收费, 转账, 收据, 退款, 交易"},
	{"customer contact", "customer, customers, client, clients, contact, contacts, lead, leads", "客户, 联系人, 顾客"},

	// Browsers.
	{"browser navigate page", "browser, open url, open website, visit, go to the site, navigate to, tab, tabs, web page", "浏览器, 打开网页, 访问, 网页, 标签页"},
	{"click page element", "click, press, tap, scroll, hover, fill in, fill form, type into, submit form", "点击, 点一下, 滚动, 填表, 输入, 提交表单"},
	{"screenshot image page", "screenshot, screen capture, capture the page, snapshot", "截图, 截屏, 快照"},

	// Text work.
	{"translate language", "translate, translation, in english, in chinese, language", "翻译, 译成, 语言"},
	{"summarize summary", "summarize, summarise, summary, tldr, tl dr, gist, recap, digest", "总结, 摘要, 概括, 归纳"},
	// Added after the first runs of the probe sets, for causes that are not
	// one probe's wording.
	{"create pull request", "propose, propose changes, suggest a change, submit changes, send my changes, open a pr, open a pull request, raise a pr, contribute, contribute back, upstream, get my changes in", "提交合并请求, 开一个合并请求, 发起合并请求, 提合并请求, 贡献代码"},
	{"issue bug", "crash, crashes, crashed, crashing, broken, breaks, doesn't work, does not work, not working, error, errors, fails, failing, regression, glitch, exception, stack trace", "崩溃, 闪退, 坏了, 出错, 报错, 不能用, 用不了, 故障, 异常, 挂了"},
	{"state list open closed", "still open, open ones, open issues, open bugs, open prs, open pull requests, closed ones, unresolved, outstanding, pending, merged ones", "未关闭, 还开着, 未解决, 待处理, 已关闭, 已合并"},
	// Local version control and code.
	{"git status diff", "git status, uncommitted, unstaged, staged, working tree, dirty, local changes, what did i change", "未提交, 暂存, 工作区改动, 本地改动"},
	{"checkout switch branch", "checkout, check out, switch to branch, switch branches", "切换分支, 检出, 签出"},
	{"stash", "stash, shelve, set aside changes", "暂存改动, 贮藏"},
	{"blame history line", "blame, who wrote, who changed, annotate, last touched", "谁写的, 谁改的, 追溯"},
	{"tag release", "tag a release, cut a release, ship a version, bump version, publish a release", "打标签, 发版本"},
	{"gist snippet", "gist, gists, paste, pastebin, snippet", "代码片段, 粘贴"},
	{"workflow run actions", "workflow, workflows, github actions, action run, rerun, re-run, job, jobs, build log", "工作流, 流水线, 重新运行, 任务日志"},
	{"search repositories popular stars", "trending, popular, most starred, top repos, well known, best library, library for, framework for, package for, alternatives to", "热门, 流行, 星最多, 有名的, 好用的库, 开源库"},
	{"user repositories owner", "my repos, my repositories, repos of, owned by, belongs to user", "我的仓库, 他的仓库, 名下的仓库"},
	{"contributors users", "contributor, contributors, committer, committers, maintainer, maintainers, author, authors, developer, developers, dev, devs, collaborator, collaborators, owner, creator", "贡献者, 维护者, 作者, 开发者, 提交者, 协作者, 创建者"},

	// Shell, processes, devops.
	{"command shell execute run", "shell, terminal, command, command line, cli, bash, zsh, powershell, cmd, script, run command, execute command", "终端, 命令, 命令行, 脚本, 执行命令, 跑命令"},
	{"process processes", "process, processes, pid, kill, running programs, task manager, cpu, memory usage", "进程, 杀掉, 结束进程, 任务管理器, 占用"},
	{"deploy deployment", "deploy, deployment, release to prod, roll out, rollout, rollback, roll back, ship to production, go live", "部署, 上线, 发布到生产, 回滚"},
	{"container docker", "docker, container, containers, image build, compose, pod, pods, kubernetes, k8s, cluster, helm", "容器, 镜像, 集群"},
	{"logs log monitoring", "logs, log lines, error log, tail logs, monitoring, alerts, alert, metrics, dashboard, uptime, incident, outage, latency, traces", "日志, 监控, 告警, 报警, 指标, 仪表盘, 宕机, 延迟"},
	{"http request api", "http request, api call, call the api, endpoint, rest, curl, get request, post request, webhook", "接口, 请求接口, 调接口, 调用接口, 网络请求"},
	{"secret password credentials", "password, passwords, secret, secrets, credential, credentials, api key, token, tokens, key vault", "密码, 密钥, 凭证, 令牌"},

	// Documents, notes, storage.
	{"note notes page document", "notion, wiki, page, pages, notebook, notes, memo, journal, doc, docs, knowledge base article", "笔记, 记事, 页面, 文档, 维基, 备忘录, 日记"},
	{"spreadsheet sheet cell", "spreadsheet, spreadsheets, sheet, sheets, excel, xlsx, cell, cells, google sheets, workbook", "表格, 电子表格, 单元格, 工作表"},
	{"drive storage bucket file", "google drive, dropbox, onedrive, s3, bucket, buckets, cloud storage, shared drive, blob storage", "网盘, 云盘, 云存储, 存储桶"},
	{"pdf document text extract", "pdf, pdfs, extract text, ocr, scanned document, read the pdf", "提取文字, 识别文字, 扫描件"},
	{"task todo project", "todo, to do, to-do, task, tasks, checklist, kanban, card, trello, asana, linear, sprint, backlog item", "待办, 任务, 清单, 看板, 卡片, 迭代"},
	{"bookmark link save", "bookmark, bookmarks, read later, saved links", "书签, 收藏夹, 稍后读"},

	// Communication beyond chat.
	{"sms phone call", "sms, text message, call, phone call, dial, ring, voicemail, whatsapp, telegram, wechat", "短信, 打电话, 电话, 微信, 语音信箱"},
	{"social post tweet", "tweet, twitter, x post, post on social, social media, facebook post, instagram, linkedin, reddit, timeline, feed, followers", "微博, 发微博, 朋友圈, 社交媒体, 粉丝, 动态"},
	{"contact contacts address book", "contact, contacts, address book, phone book, rolodex", "通讯录, 联系人, 电话簿"},

	// Time, numbers, conversions.
	{"time current timezone clock", "what time is it, current time, time now, clock, time zone, timezone, utc, local time", "现在几点, 当前时间, 时区, 几点了, 北京时间"},
	{"convert unit currency", "convert units, unit conversion, currency, exchange rate, usd, eur, rmb, yuan, dollars, euros, celsius, fahrenheit, inches, pounds", "换算, 单位换算, 汇率, 美元, 人民币, 欧元, 摄氏度, 华氏度"},
	{"calculate math number", "calculate, calculation, compute, math, arithmetic, multiply, divide, subtract, minus, times, percentage, square root, equation, formula", "计算, 算, 数学, 乘, 除, 减, 百分比, 公式, 算一下"},
	{"random generate", "random, randomly, dice, coin flip, uuid, generate id", "随机, 掷骰子, 抛硬币"},
	{"hash checksum", "hash, checksum, md5, sha256, sha1, digest", "哈希, 校验和, 摘要值"},

	// Finance and commerce.
	{"stock price market", "stock, stocks, share price, ticker, market, nasdaq, portfolio, crypto, bitcoin, price of", "股票, 股价, 行情, 市场, 比特币, 价格"},
	{"flight hotel booking travel", "flight, flights, airline, boarding, book a flight, hotel booking, reservation, reserve, book a table, booking", "航班, 机票, 订票, 订酒店, 预订, 订位, 订餐"},
	{"product catalog inventory", "product, products, catalog, catalogue, sku, inventory, stock level, in stock, price list", "商品, 产品, 库存, 有货, 价目表"},

	// Media and devices.
	{"play music media", "play, playlist, pause, skip song, spotify, volume", "播放, 暂停, 歌单, 音量, 下一首"},
	{"transcribe speech audio", "transcribe, transcription, speech to text, dictation, subtitles, captions", "转写, 转文字, 语音转文字, 字幕"},
	{"generate image", "draw, paint, generate an image, create a picture, illustrate, render, sketch", "画, 画一张, 生成图片, 作图, 绘制"},
	{"resize image", "resize, crop, rotate, thumbnail, compress image, convert image", "缩放, 裁剪, 旋转, 缩略图"},
	{"device smart home", "lights, light, thermostat, smart home, lock, unlock, camera, sensor, temperature sensor", "灯, 开灯, 关灯, 空调, 智能家居, 门锁, 摄像头, 传感器"},

	// Everyday paraphrases around the tools of files, code hosting, chat,
	// maps, memory.
	{"read file content", "what does it say, what it says, go through, skim, read through, read out, print out, cat out, dump the file, load", "说了什么, 写了什么, 内容是什么, 读出来, 打印出来, 加载"},
	{"head tail lines", "first lines, last lines, first few lines, last few lines, beginning of, end of, top of, bottom of, head, tail", "前几行, 最后几行, 开头, 结尾, 头几行"},
	{"write file new content", "write down, jot, create a file, new file, make a file, blank file, empty file, dump into", "新建文件, 创建文件, 写个文件, 建个文件, 空文件"},
	{"directory list files", "folder contents, what's in the folder, see the folder, browse, explore, look around, poke around", "浏览, 翻一翻, 看看有什么"},
	{"pull request details", "what's the pr about, about the pr, pr description, pr details, summary of the pr", "合并请求的内容"},
	{"issue details", "what does the issue say, issue description, issue details, bug details", "问题详情, 工单详情, 工单内容"},
	{"list issues filter", "all issues, open issues, issue list, which issues, what issues, backlog", "所有问题, 问题列表, 工单列表, 有哪些问题"},
	{"list pull requests", "all prs, open prs, pr list, pending prs, which prs, what prs, waiting for review", "待合并, 待审"},
	{"comments review", "inline comments, line comments, review comments, code comments, feedback on the code", "行内评论, 代码评论, 评审意见"},
	{"message channel post", "let everyone know, tell the team, tell everyone, announce to, heads up to, inform, update the team", "通知大家, 告诉大家, 跟大家说, 在群里说, 群里说"},
	{"thread replies get", "the replies, responses to, answers to, what did people reply, what did they say under", "回复了什么, 下面的回复, 跟帖内容"},
	{"users list workspace", "who is in, who's in, who is on, member list, user list, roster, list of people", "成员列表, 人员名单, 花名册, 都有哪些人"},
	{"geocode address coordinates", "where exactly, exact location, pinpoint, put on the map, locate on the map", "具体位置, 精确位置, 在地图上"},
	{"distance matrix multiple origins destinations", "from several, from multiple, to several, each of, every pair, matrix, table of distances, compare travel times", "几个地方, 多个地点, 分别, 各要, 各自"},
	{"directions route step", "step by step directions, turn by turn, how to drive, how to walk, best way to get, fastest way, shortest route", "最快的路, 最短路线, 怎么开, 怎么坐车"},
	{"search nodes memory query", "what do you have on, anything about, what do you know about, search memory, in your memory", "有没有关于, 记忆里, 你记得关于"},
	{"open nodes names", "look up by name, by their names, those specific, pull up the records", "按名字, 这些名字"},
	// More everyday wording of file requests.
	{"read content file", "contain, contains, containing, what does it contain, open up, read me, read it, view the source, print the file", "里面写的, 里面是什么, 打开看看, 读给我, 看下内容, 文件里写了"},
	{"write file save", "export, export to, write it to, put it in a file, store it in a file, save it to, output to a file, generate a file", "导出, 输出到文件, 生成一个文件, 写一个, 存到, 保存到"},
	{"edit file line", "append, append to, insert, add a line, remove a line, delete a line, comment out, uncomment, refactor, rename the variable, update the config, bump", "追加, 插入, 加一行, 删掉一行, 删一行, 注释掉, 取消注释, 重构, 改配置"},
	{"list directory", "what's there, files in, contents of the directory, what's in the directory, directory listing, folder listing", "文件夹里, 目录里, 文件夹下, 目录下"},
	{"directory tree", "map of the project, project map, all files recursively, full listing, every file and folder, whole tree", "整个目录, 所有子目录, 全部文件和文件夹, 项目地图"},
	{"search files name", "named, called, file named, files named, file called, files called, by name, with the name, name contains, whose name", "叫, 名叫, 名字里有, 文件名包含, 叫做, 名为"},
	{"file info size type", "file size, size of the file, file type, is it a folder, is it a directory, when created, creation time, last access", "文件大小, 什么类型, 是不是目录, 是文件夹吗, 创建于, 访问时间"},
	{"allowed directories", "what can you access, where can you write, where can you read, workspace roots, working directory, which paths", "你能看到哪些目录, 工作目录, 能操作哪些, 可以写哪些"},

	// More wording of code-hosting requests.
	{"search repositories", "repos about, projects on, libraries for, repo for, a repo that, open source project, find a repo, search github for", "找开源项目, 有什么库, 找仓库, 搜仓库, 开源的"},
	{"file contents repository", "from the repo, in the repo, in that repo, of the repo, readme of, the repo's", "仓库里的, 看仓库里的, 仓库中的, 仓库的文件"},
	{"create or update file repository", "edit a file on github, update the readme, commit a change, commit a fix, commit the change", "在仓库里改, 直接改仓库里的, 提交一个修改, 提交修改"},
	{"create issue", "new issue, new bug, request a feature, feature request, open a bug, suggest a feature", "提需求, 新建问题, 新问题, 提一个需求, 建个工单"},
	{"search code", "where is it used, find usages, grep github, search the code, search code for, in the source", "搜代码, 哪里用到, 在哪里调用, 代码里搜"},
	{"search issues", "any issues about, has anyone reported, known issue, known bug, reported before, similar issues, existing issues", "有没有人报过, 搜问题, 已知问题, 类似的问题, 有人提过"},
	{"search users", "find a developer, github profile, github user, developer named, account called, someone on github", "找开发者, 找用户, 搜用户, 找个人"},

	// More wording of chat requests.
	{"post message channel", "send to the channel, say in, write in, post in, post to, drop a message, share in, share with the team", "发到频道, 在频道里说, 发到群里, 发到群, 分享到, 发个消息"},
	{"reaction emoji", "emoji react, add an emoji, mark with, acknowledge with", "加个表情, 回个表情, 点个表情, 表情回复"},
	{"history channel messages", "last messages, last few messages, what was said, read the channel, messages in, channel messages, conversation so far", "频道里的消息, 最近的消息, 群里的消息, 聊天内容, 群消息"},
	{"list channels", "what channels, which channels, channels can i, channel list, all channels", "有哪些群, 有哪些频道, 频道列表, 群列表, 所有频道"},

	// More wording of map requests.
	{"search places recommend", "recommend, recommendation, suggest a place, good places, best places, top rated, where to eat, where can i, somewhere to", "推荐, 哪家, 有什么好, 去哪吃, 哪里可以, 好去处"},
	{"geocode address postal", "zip code of, postcode of, postal code of, what city, which city, which country, which district", "邮编, 哪个城市, 哪个国家, 哪个区"},
	{"distance between", "how far apart, distance between, far from, away from, kilometers from, miles from", "离, 相隔, 离这里, 有多远, 隔多远"},

	// More wording of web requests.
	{"web search", "google it, search for info, who won, what happened, price of, latest version, release date, how to, tutorial, documentation, docs for, definition of, meaning of, look it up online", "是什么意思, 怎么做, 教程, 最新版本, 谁赢了, 发生了什么, 查资料, 百科, 文档"},

	// More wording of memory requests.
	{"memory entity observation", "save to memory, store in memory, put in your memory, keep a note, about me, my preferences, know about me", "关于我, 我的偏好, 你对我了解, 存到记忆, 存进记忆, 记到记忆"},
	{"relation create", "link, link them, connect them, tie them together, associate, relate", "把他们关联, 建立关系, 关联起来, 连起来"},
	{"observation add update", "update what you know, add to what you know, also remember, one more fact, add a detail", "补充, 再记一条, 再加一条, 补充信息"},

	// More wording of thinking requests.
	{"thinking thought steps", "let's think, plan out, outline the approach, reason step by step, think hard, think it over, multi step, in stages", "分步骤, 仔细思考, 想一下, 好好想想, 分几步, 深入思考"},

	// More wording of the test server's tools.
	{"echo test", "test the tool, test tool, connectivity test, say it back", "测试一下, 测试工具, 说回来"},
	{"tiny image sample", "sample image, test image, example image, small image, tiny picture, logo image", "示例图片, 测试图片, 小图片, 样例图片"},
	{"resource links", "resource link, resource links, links to resources, list resources", "资源链接, 资源列表"},
	// Phrasal verbs and mentions, added after the third probe set's first
	// run (whose figure, in lexicon_probe_test.go, is from before them).
	{"write save file", "dump into, put in, put into, write up, note down, jot down, fill in, save into, store into, send to a file", "存进, 放进文件, 写进去, 记到文件"},
	{"read get view", "go over, look into, look through, look over, read over, pull from, grab from, bring up", "过一遍, 翻看, 调出来, 拿出来看"},
	{"post message channel", "drop a note, drop a message, send over, pass on, pass along, give a heads up", "所有人说, 全体成员, 通知一下, 转告"},
	{"create setup", "set up, spin up, stand up, hook up, put together, whip up", "搭一个, 弄一个, 整一个, 配置一个"},
	{"delete clean", "clean up, clear out, sort out, tidy up, throw out, get rid", "清理掉, 收拾, 整理掉"},
}
